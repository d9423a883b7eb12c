//! (d) The context check: remembered elements change no answer.
#![no_main]

#[path = "../harness/json.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::json(data));
