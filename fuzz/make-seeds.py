#!/usr/bin/env python3
"""Writes the seed corpora seeds/<target>/seed-* from tests/data.

framing: a log prefixed with the two control bytes of the target;
convert: a log prefixed with its flags byte (1 = multistep, 2 = inline dedup);
decode:  the payload of every REGULAR message of those logs;
salvage: those payloads behind a control byte (whole; cut at the half as
         the input's end; cut at three quarters in place).
Run from fuzz/: python3 make-seeds.py
"""
import os
import struct

LOGS = {
    "cb_simple": "valid_joined_logs/cb_simple.log",
    "ccb_simple": "valid_joined_logs/ccb_simple.log",
    "slates_simple": "valid_joined_logs/slates_simple.log",
    "ca_loop_simple": "valid_joined_logs/ca_loop_simple.fb",
    "cb_dedup_compressed": "valid_joined_logs/cb_dedup_compressed.log",
    "multistep_2_episodes": "valid_joined_logs/multistep_2_episodes.fb",
    "rcrrmr": "valid_joined_logs/rcrrmr.fb",
    "cb_apprentice_5": "valid_joined_logs/cb_apprentice_5.log",
    "ccb_skip_learn": "skip_learn/ccb/deferred_action_with_activation_deduped.fb",
    "ca_skip_learn": "skip_learn/ca/mixed_deferred_action_events.fb",
}

# json: a split byte, then two contexts that share actions.
CONTEXTS = [
    b'{"GUser":{"id":"u87734","major":"med","hobby":"hiking","age":65},"_multi":[{"TAction":{"a_id":"a6","topic":"science","len":92}},{"TAction":{"a_id":"a7","topic":"finance","len":74}}]}',
    b'{"GUser":{"id":"u1","f":[1.5,-2e-3,0]},"_multi":[{"TAction":{"a_id":"a7","topic":"finance","len":74}},{"a":1}],"_slots":[{"_id":"s1"},{"_id":"s2","_inc":[0,1]}]}',
]

for target in ("framing", "convert", "decode", "json", "salvage"):
    os.makedirs(f"seeds/{target}", exist_ok=True)

joined = CONTEXTS[0] + CONTEXTS[1]
open("seeds/json/seed-contexts", "wb").write(bytes([len(CONTEXTS[0]) * 256 // len(joined) + 1]) + joined)

for name, path in LOGS.items():
    data = open(os.path.join("..", "tests", "data", path), "rb").read()
    open(f"seeds/framing/seed-{name}", "wb").write(bytes([0x00, 0x20]) + data)
    flags = 1 if "multistep" in name else 2 if "dedup" in name else 0
    open(f"seeds/convert/seed-{name}", "wb").write(bytes([flags]) + data)
    pos, n = 0, 0
    while pos + 8 <= len(data):
        kind, size = struct.unpack_from("<II", data, pos)
        if kind == 0xAAAAAAAA:
            break
        if kind == 0x42465756:
            pos += 8
            continue
        if kind == 0xFFFFFFFF:
            payload = data[pos + 8 : pos + 8 + size]
            open(f"seeds/decode/seed-{name}-{n}", "wb").write(payload)
            for ctl in (0x7F, 0x80 | 64, 96):
                open(f"seeds/salvage/seed-{name}-{n}-{ctl:02x}", "wb").write(bytes([ctl]) + payload)
            n += 1
        pos += 8 + size + size % 8
