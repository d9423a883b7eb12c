//! (c) The whole convert path: both compat modes and the recovering one.
#![no_main]

#[path = "../harness/convert.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::convert_all(data));
