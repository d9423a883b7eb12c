use super::*;
use flatbuffers::FlatBufferBuilder;

fn outcome_bytes(args: &OutcomeEventArgs<'_>) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::new();
    let root = OutcomeEvent::create(&mut fbb, args);
    fbb.finish_minimal(root);
    fbb.finished_data().to_vec()
}

#[test]
fn outcome_round_trips_every_union_member() {
    let cases: &[(&str, OutcomeEventArgs<'_>, OutcomeValue<'_>, IndexValue<'_>)] = &[
        (
            "numeric value, numeric index",
            OutcomeEventArgs {
                value: UnionArg::Numeric(1.5),
                index: UnionArg::Numeric(3),
                action_taken: false,
            },
            OutcomeValue::Numeric(1.5),
            IndexValue::Numeric(3),
        ),
        (
            "literal value, literal index",
            OutcomeEventArgs {
                value: UnionArg::Literal("clicked"),
                index: UnionArg::Literal("slot-a"),
                action_taken: false,
            },
            OutcomeValue::Literal("clicked"),
            IndexValue::Literal("slot-a"),
        ),
        (
            "activation without value or index",
            OutcomeEventArgs {
                value: UnionArg::None,
                index: UnionArg::None,
                action_taken: true,
            },
            OutcomeValue::None,
            IndexValue::None,
        ),
        (
            "negative numbers",
            OutcomeEventArgs {
                value: UnionArg::Numeric(-0.25),
                index: UnionArg::Numeric(-1),
                action_taken: false,
            },
            OutcomeValue::Numeric(-0.25),
            IndexValue::Numeric(-1),
        ),
    ];
    for (name, args, value, index) in cases {
        let bytes = outcome_bytes(args);
        let ev = verified::<OutcomeEvent>(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(ev.value(), *value, "{name}");
        assert_eq!(ev.index(), *index, "{name}");
        assert_eq!(ev.action_taken(), args.action_taken, "{name}");
    }
}

#[test]
fn outcome_verifier_rejects_a_string_tag_pointing_past_the_end() {
    let mut bytes = outcome_bytes(&OutcomeEventArgs {
        value: UnionArg::Literal("abc"),
        index: UnionArg::None,
        action_taken: false,
    });
    // Make the string's length field claim far more bytes than exist.
    let pos = bytes.windows(3).position(|w| w == b"abc").unwrap();
    bytes[pos - 4..pos].copy_from_slice(&1000u32.to_le_bytes());
    assert!(verified::<OutcomeEvent>(&bytes).is_err());
}

#[test]
fn outcome_verifier_checks_member_against_its_tag() {
    // A literal written where the tag says numeric must not be read as a table.
    let mut bytes = outcome_bytes(&OutcomeEventArgs {
        value: UnionArg::Literal("abcdefgh"),
        index: UnionArg::None,
        action_taken: false,
    });
    // Find the tag byte (UNION_LITERAL) via the vtable and flip it to numeric.
    let root = u32::from_le_bytes(bytes[0..4].try_into().unwrap()) as usize;
    let vt = (root as i64 - i32::from_le_bytes(bytes[root..root + 4].try_into().unwrap()) as i64)
        as usize;
    let field = u16::from_le_bytes(bytes[vt + 4..vt + 6].try_into().unwrap()) as usize;
    assert_eq!(bytes[root + field], UNION_LITERAL);
    bytes[root + field] = UNION_NUMERIC;
    // The tag decides: the verifier checks the member as the table the tag
    // names (here the string's bytes happen to form a valid one), and the
    // accessor reads it as that, never as the literal it was written as.
    let ev = verified::<OutcomeEvent>(&bytes).expect("the bytes form a NumericOutcome");
    assert!(
        matches!(ev.value(), OutcomeValue::Numeric(_)),
        "{:?}",
        ev.value()
    );
}

#[test]
fn timestamp_zero_means_absent() {
    assert!(TimeStamp::default().is_zero());
    assert!(!TimeStamp::new(2021, 5, 18, 13, 28, 29, 0).is_zero());
    // Any one byte set, in either word it is read as, is a time.
    for at in 0..12 {
        for bit in 0..8 {
            let mut bytes = [0u8; 12];
            bytes[at] = 1 << bit;
            assert!(!TimeStamp(bytes).is_zero(), "byte {at}, bit {bit}");
        }
    }
}

#[test]
fn enums_have_the_wire_values() {
    assert_eq!(ProblemType::MULTISTEP.0, 5);
    assert_eq!(PayloadType::Episode.0, 7);
    assert_eq!(RewardFunctionType::Max.0, 5);
    assert_eq!(LearningModeType::LoggingOnly.0, 2);
    assert_eq!(EventEncoding::Zstd.0, 1);
}

/// The tables of `schema/*.fbs`: name → fields in order, each with its
/// type text and whether it is a union (which takes two vtable slots).
fn schema_tables() -> std::collections::BTreeMap<String, Vec<(String, String, bool)>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
    let mut text = String::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        for line in std::fs::read_to_string(file).unwrap().lines() {
            // Comments out, one statement per line.
            let line = line.split("//").next().unwrap_or("");
            text.push_str(line);
            text.push('\n');
        }
    }
    let unions: Vec<String> = text
        .split("union ")
        .skip(1)
        .map(|rest| rest.split_whitespace().next().unwrap().to_string())
        .collect();
    let mut tables = std::collections::BTreeMap::new();
    for rest in text.split("table ").skip(1) {
        let name = rest.split_whitespace().next().unwrap().to_string();
        let body = &rest[rest.find('{').unwrap() + 1..rest.find('}').unwrap()];
        let fields = body
            .split(';')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(|f| {
                let (field, ty) = f.split_once(':').unwrap();
                let ty = ty.split('=').next().unwrap().trim().to_string();
                let union = unions.contains(&ty);
                (field.trim().to_string(), ty, union)
            })
            .collect();
        tables.insert(name, fields);
    }
    tables
}

/// `quick.rs` mirrors the schema by hand; its [`quick::MIRROR`] must
/// match the .fbs files field for field, with the vtable offsets the
/// generated code uses, and cover every field of each table it checks.
#[test]
fn quick_mirror_matches_the_schema() {
    let tables = schema_tables();
    let mirrored: std::collections::BTreeSet<&str> =
        crate::quick::MIRROR.iter().map(|(t, ..)| *t).collect();
    assert!(mirrored.len() >= 12, "{mirrored:?}");
    for table in mirrored {
        let fields = tables
            .get(table)
            .unwrap_or_else(|| panic!("quick.rs checks `{table}`, which the schema lacks"));
        let mine: Vec<(&str, &str, u16)> = crate::quick::MIRROR
            .iter()
            .filter(|(t, ..)| *t == table)
            .map(|(_, f, ty, vt)| (*f, *ty, *vt))
            .collect();
        // Vtable slots from the schema: 4 bytes of header, 2 per slot, a
        // union taking one for its type and one for its value.
        let mut slot = 0u16;
        let mut want = Vec::new();
        for (field, ty, union) in fields {
            if *union {
                slot += 1;
            }
            want.push((field.as_str(), ty.as_str(), 4 + 2 * slot));
            slot += 1;
        }
        assert_eq!(
            mine, want,
            "quick.rs's mirror of `{table}` differs from the schema: update the checks in \
             quick.rs, then MIRROR"
        );
    }
}
