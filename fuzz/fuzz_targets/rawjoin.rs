//! The raw-stream joiner: two streams from one input, with and without a
//! window, with and without recovery; every observation accounted for.
#![no_main]

#[path = "../harness/rawjoin.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::rawjoin(data));
