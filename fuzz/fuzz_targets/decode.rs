//! (b) Typed decoding of a REGULAR payload: every event, every field.
#![no_main]

#[path = "../harness/format.rs"]
#[allow(dead_code)]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::decode(data));
