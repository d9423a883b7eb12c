//! (a) The framing core: `Framer` whole and split, the readers, recovery.
#![no_main]

#[path = "../harness/format.rs"]
#[allow(dead_code)]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::framing(data));
