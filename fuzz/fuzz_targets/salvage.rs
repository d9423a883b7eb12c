//! Salvage of a damaged REGULAR payload: cut or corrupt, every event
//! accounted for, the kept ones a valid message.
#![no_main]

#[path = "../harness/format.rs"]
#[allow(dead_code)]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::salvage(data));
