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
