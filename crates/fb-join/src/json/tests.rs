//! Tests of the JSON check: against serde_json and a reference
//! implementation on mutated texts, and of what its memos remember.

use super::context_shapes::Then;
use super::{
    reference, validate, ContextShapes, JsonElementMemo, JsonError, Memos, Validator, MAX_DEPTH,
};
use crate::Caches;
use fb_tests::Rng;
use std::cell::RefCell;
use std::collections::BTreeSet;

const SAMPLE: u32 = crate::caches::MemoRate::SAMPLE;

#[test]
fn strings_stop_where_they_must() {
    for byte in 0..=u8::MAX {
        let stops = byte < 0x20 || byte == b'"' || byte == b'\\' || byte >= 0x80;
        assert_eq!(super::scan::stops(byte), stops, "{byte:#x}");
    }
}

#[test]
fn agrees_with_serde_json() {
    let cases: &[&str] = &[
        r#"{"GUser":{"id":"a","major":"eng"},"_multi":[{"TAction":{"a1":"f1"}},{"TAction":{"a2":"f2"}}]}"#,
        r#"{"A": {"f": 1}, "_multi":[{"a1":"f1"},{"a2":"f2"}]}"#,
        "{}",
        "[]",
        " [ ] ",
        "0",
        "-0.5e+10",
        "1E5",
        "\"\\u00e9\\n\"",
        "true",
        "null",
        "[1,2,[3,{\"a\":[]}]]",
        "{\"a\":1,}",
        "[1,]",
        "{\"a\" 1}",
        "{a:1}",
        "01",
        "1.",
        "-",
        ".5",
        "\"abc",
        "\"\\x\"",
        "\"\\u12g4\"",
        "[",
        "]",
        "",
        "   ",
        "{} {}",
        "{\"a\":tru}",
        "nul",
        "[\"\u{1}\"]",
        "{\"é\":\"ü\"}",
        "[1e]",
        "[1e+]",
        "{\"a\":{\"b\":{\"c\":[[[]]]}}}",
        "{\"__aid\":12}",
        "[[1],[2,[3]]]",
        "{\"x\":-}",
        "[true false]",
        "{\"a\":1 \"b\":2}",
    ];
    for case in cases {
        let ours = validate(case.as_bytes()).is_ok();
        let theirs = serde_json::from_str::<serde_json::Value>(case).is_ok();
        assert_eq!(ours, theirs, "{case:?}");
    }
}

#[test]
fn invalid_utf8_and_depth_are_errors() {
    assert!(validate(b"\"\xff\"").is_err());
    let deep = "[".repeat(300) + &"]".repeat(300);
    assert_eq!(
        validate(deep.as_bytes()).unwrap_err().what,
        "nested too deeply"
    );
    let ok = "[".repeat(256) + &"]".repeat(256);
    assert!(validate(ok.as_bytes()).is_ok());
}

#[test]
fn errors_say_where() {
    let e = validate(br#"{"a":[1,2,}"#).unwrap_err();
    assert_eq!(e.offset, 10);
}

/// A validator that never rests: every test text goes through it too,
/// and meets the elements of the texts before it.
fn remembering() -> Validator {
    Validator {
        memos: Some(Memos {
            elements: JsonElementMemo::new(false),
            last: Default::default(),
            shapes: ContextShapes::fixed(),
        }),
    }
}

/// A validator that remembers elements and arrays, never rests, and
/// knows no shape: for tests of what it remembers.
fn memo_only() -> Validator {
    Validator {
        memos: Some(Memos {
            elements: JsonElementMemo::new(false),
            last: Default::default(),
            shapes: ContextShapes::off(),
        }),
    }
}

thread_local! {
    static REMEMBERING: RefCell<Validator> = RefCell::new(remembering());
}

/// What `validate` says of `text`, checked against the reference, and
/// against a validator that remembers the elements of earlier texts.
fn same(text: &[u8]) -> &'static str {
    let ours = validate(text);
    assert_eq!(
        ours,
        reference::validate(text),
        "on {}",
        text.escape_ascii()
    );
    let remembered = REMEMBERING.with(|v| v.borrow_mut().validate(text));
    assert_eq!(ours, remembered, "remembering, on {}", text.escape_ascii());
    let off = Validator::with_caches(Caches::Off).validate(text);
    assert_eq!(ours, off, "caches off, on {}", text.escape_ascii());
    ours.err().map_or("ok", |e: JsonError| e.what)
}

#[test]
fn repeated_elements_are_found_and_stepped_over() {
    let mut v = memo_only();
    assert_eq!(v.validate(CONTEXT), Ok(()));
    // The actions' array and both actions are over 32 bytes: looked
    // up, not found.
    assert_eq!(v.lookups(), (3, 0));
    // Another user offered the same actions (the whole text differs,
    // so it is not stepped over as a repeat of the last one): the
    // array is found, its actions not looked up one by one.
    let other = String::from_utf8(CONTEXT.to_vec())
        .unwrap()
        .replace("u87734", "u87735");
    assert_eq!(v.validate(other.as_bytes()), Ok(()));
    assert_eq!(v.lookups(), (4, 1));
    // One byte changed in the second action: the array is not found,
    // the first action is, the second is checked again, and the error
    // found where the plain check finds it.
    let broken = String::from_utf8(CONTEXT.to_vec())
        .unwrap()
        .replace(r#""len":74"#, r#""len":7x"#);
    assert_eq!(v.validate(broken.as_bytes()), validate(broken.as_bytes()));
    assert!(validate(broken.as_bytes()).is_err());
    assert_eq!(v.lookups(), (7, 2));
    // The failed array was not remembered: met again, it is checked
    // again, and fails again.
    assert_eq!(v.validate(broken.as_bytes()), validate(broken.as_bytes()));
    assert_eq!(v.lookups(), (10, 3));
}

/// Lookups and hits that each text adds, one validator for them all,
/// in order: arrays of objects are remembered whole, other arrays are
/// not looked up.
#[test]
fn arrays_of_objects_are_remembered_whole() {
    const A: &str = r#"{"TAction":{"a_id":"a6","topic":"science","len":92}}"#;
    const B: &str = r#"{"TAction":{"a_id":"a7","topic":"finance","len":74}}"#;
    let numbers = "[1.25,2.5,3.75,5.0,6.25,7.5,8.75,10.0,11.25]";
    // (name, text, lookups added, hits added)
    let cases: [(&str, String, u64, u64); 7] = [
        ("first", format!(r#"{{"_multi":[{A},{B}]}}"#), 3, 0),
        (
            "the array again",
            format!(r#"{{"u":1,"_multi":[{A},{B}]}}"#),
            1,
            1,
        ),
        (
            "its actions in another order",
            format!(r#"{{"_multi":[{B},{A}]}}"#),
            3,
            2,
        ),
        (
            "that order again, in another array",
            format!(r#"[[{B},{A}]]"#),
            1,
            1,
        ),
        (
            "an array of numbers, twice",
            format!("{{\"f\":{numbers},\"g\":{numbers}}}"),
            0,
            0,
        ),
        (
            "the array with a space after its bracket",
            format!(r#"{{"_multi":[ {A},{B}]}}"#),
            2,
            2,
        ),
        (
            "the array inside a string",
            format!(r#"{{"s":"[{}]"}}"#, A.replace('"', "'")),
            0,
            0,
        ),
    ];
    let mut v = memo_only();
    for (name, text, tries, hits) in cases {
        let (before_tries, before_hits) = v.lookups();
        assert_eq!(v.validate(text.as_bytes()), Ok(()), "{name}");
        assert_eq!(
            v.lookups(),
            (before_tries + tries, before_hits + hits),
            "{name}"
        );
    }
}

#[test]
fn an_element_found_valid_shallow_is_checked_again_deeper() {
    // 120 levels inside one element: valid at depth 2, too deep at 140.
    let element = format!("{{\"a\":{}{}}}", "[".repeat(120), "]".repeat(120));
    assert!(element.len() <= super::element_memo::ENTRY_BYTES);
    let shallow = format!("[{element},{element}]");
    let deep = format!("{}[{element}]{}", "[".repeat(139), "]".repeat(139));
    let mut v = memo_only();
    // The array and its first element not found; the second found.
    assert_eq!(v.validate(shallow.as_bytes()), Ok(()));
    assert_eq!(v.lookups(), (3, 1));
    assert_eq!(
        v.validate(deep.as_bytes()).unwrap_err().what,
        "nested too deeply"
    );
    assert_eq!(v.validate(deep.as_bytes()), validate(deep.as_bytes()));
    let (tries, hits) = v.lookups();
    // At the depth it was found valid at, it is stepped over (inside
    // an array not seen before); one deeper, it is checked again.
    assert_eq!(v.validate(format!("[{element}]").as_bytes()), Ok(()));
    assert_eq!(v.lookups(), (tries + 2, hits + 1));
    assert_eq!(v.validate(format!("[[{element}]]").as_bytes()), Ok(()));
    assert_eq!(v.lookups(), (tries + 4, hits + 1));
}

#[test]
fn an_array_found_valid_shallow_is_checked_again_deeper() {
    // 120 levels inside the array's element: valid as a member of the
    // outer object, too deep 139 objects further in (member objects
    // are not looked up, so the array itself is, that deep).
    let array = format!("[{{\"a\":{}{}}}]", "[".repeat(120), "]".repeat(120));
    assert!(array.len() <= super::element_memo::ENTRY_BYTES);
    let shallow = format!("{{\"x\":{array}}}");
    let deep = format!("{}{shallow}{}", r#"{"y":"#.repeat(139), "}".repeat(139));
    let mut v = memo_only();
    // The array and its element, not found.
    assert_eq!(v.validate(shallow.as_bytes()), Ok(()));
    assert_eq!(v.lookups(), (2, 0));
    // The same bytes again, not as a repeat of the whole text: found.
    assert_eq!(v.validate(format!(" {shallow}").as_bytes()), Ok(()));
    assert_eq!(v.lookups(), (3, 1));
    // Deeper, looked up and not taken: checked again, and too deep.
    assert_eq!(
        v.validate(deep.as_bytes()).unwrap_err().what,
        "nested too deeply"
    );
    assert_eq!(v.lookups(), (5, 1));
    assert_eq!(v.validate(deep.as_bytes()), validate(deep.as_bytes()));
}

/// Made with caches off, a validator says what `validate` says of every
/// text, and remembers nothing: where one made with them on steps over
/// repeated texts, elements and shapes, it looks nothing up.
#[test]
fn a_validator_made_off_remembers_nothing() {
    let context = std::str::from_utf8(CONTEXT).unwrap();
    let texts: Vec<String> = (0..50)
        .flat_map(|i| {
            [
                context.to_string(),
                context.to_string(),
                context.replace("u87734", &format!("u{i}")),
                context.replace("u87734", &format!("u{i}\\x")),
                format!("[{context},{context}]"),
            ]
        })
        .collect();
    let mut on = Validator::with_caches(Caches::On);
    let mut off = Validator::with_caches(Caches::Off);
    for text in &texts {
        let plain = validate(text.as_bytes());
        assert_eq!(on.validate(text.as_bytes()), plain, "{text}");
        assert_eq!(off.validate(text.as_bytes()), plain, "{text}");
    }
    assert!(off.memos.is_none());
    assert_eq!(
        (off.repeats(), off.lookups(), off.shapes()),
        Default::default()
    );
    for (what, (tries, hits)) in [
        ("repeats", on.repeats()),
        ("lookups", on.lookups()),
        ("shapes", on.shapes()),
    ] {
        assert!(tries > 0 && hits > 0, "{what}: {tries} tries, {hits} hits");
    }
}

#[test]
fn elements_and_texts_that_never_repeat_rest_their_memos() {
    let mut v = Validator::new();
    let text = |i: usize| format!("[{{\"unique\":\"element number {i:>12}\"}}]");
    for i in 0..3 * SAMPLE as usize {
        assert_eq!(v.validate(text(i).as_bytes()), Ok(()));
    }
    // No hit in the first sample of either: the rest of the elements
    // went unlooked-up, the rest of the texts uncompared.
    assert_eq!(v.lookups(), (u64::from(SAMPLE), 0));
    assert_eq!(v.repeats(), (u64::from(SAMPLE), 0));
}

#[test]
fn a_repeated_text_is_stepped_over_and_only_that() {
    let mut v = Validator::new();
    let copy = CONTEXT.to_vec();
    let mut cut = CONTEXT.to_vec();
    cut.pop();
    let mut flipped = CONTEXT.to_vec();
    if let Some(b) = flipped.iter_mut().find(|b| **b == b':') {
        *b = b';';
    }
    let cases: [(&str, &[u8], bool); 6] = [
        ("first", CONTEXT, true),
        ("again", CONTEXT, true),
        ("again, a copy", &copy, true),
        ("its last byte cut", &cut, false),
        ("a colon made a semicolon", &flipped, false),
        ("after the failures, again", CONTEXT, true),
    ];
    for (name, text, ok) in cases {
        let said = v.validate(text);
        assert_eq!(said.is_ok(), ok, "{name}");
        assert_eq!(said, validate(text), "{name}");
    }
    // Each text was compared with the last valid one; the three valid
    // ones after the first matched it.
    assert_eq!(v.repeats(), (6, 3));
}

/// A text made of a known shape's fixed bytes is checked by its
/// values: whatever they are, it is said valid or not exactly as the
/// plain check says; and it fits the shape only where its fixed bytes
/// are the shape's and its values are valid.
#[test]
fn a_text_of_a_known_shape_is_checked_by_its_values() {
    let context = std::str::from_utf8(CONTEXT).unwrap();
    let with = |from: &str, to: &str| {
        assert!(context.contains(from), "{from}");
        context.replacen(from, to, 1)
    };
    // The actions' array inside `levels` more arrays: it is a value of
    // the shape, checked at the depth the shape found it at (1).
    let deep = |levels: usize| {
        let open = r#""_multi":["#;
        with(
            open,
            &format!("{open}{}{}, ", "[".repeat(levels), "]".repeat(levels)),
        )
    };
    // (name, text, whether it fits the shape of CONTEXT)
    let cases: Vec<(&str, String, bool)> = vec![
        ("another user", with("u87734", "u11111"), true),
        (
            "a longer number",
            with(r#""age":65"#, r#""age":-6.5e+12"#),
            true,
        ),
        (
            "a longer string",
            with("hiking", "hiking in the hills, alone"),
            true,
        ),
        (
            "an escape in a value",
            with("hiking", r"hik\ning\u00e9"),
            true,
        ),
        ("a bad escape in a value", with("hiking", r"hik\x"), false),
        ("non-ASCII in a value", with("hiking", "h\u{e9}king"), true),
        (
            "a control character in a value",
            with("hiking", "hik\u{1}ng"),
            false,
        ),
        (
            "an unterminated value",
            with(r#""hiking","#, r#""hiking,"#),
            false,
        ),
        ("a leading zero", with(r#""age":65"#, r#""age":065"#), false),
        (
            "a number cut short",
            with(r#""age":65"#, r#""age":6."#),
            false,
        ),
        (
            "a string where a number was",
            with(r#""age":65"#, r#""age":"65""#),
            false,
        ),
        (
            "a literal where a string was",
            with(r#""hiking""#, "true"),
            false,
        ),
        ("another member name", with("hobby", "hobbx"), false),
        (
            "a space after a colon",
            with(r#""age":65"#, r#""age": 65"#),
            false,
        ),
        ("other actions", with("science", "history"), true),
        (
            "an action broken",
            with(r#""len":92"#, r#""len":9x"#),
            false,
        ),
        (
            "an array of numbers for the actions",
            with(
                r#"[{"TAction":{"a_id":"a6","topic":"science","len":92}},"#,
                "[1,",
            ),
            true,
        ),
        ("a text after the value", format!("{context}x"), false),
        (
            "its last byte cut",
            context[..context.len() - 1].to_string(),
            false,
        ),
        ("nested as deep as allowed", deep(MAX_DEPTH - 2), true),
        ("nested one deeper", deep(MAX_DEPTH - 1), false),
    ];
    for (name, text, fits) in cases {
        let mut v = remembering();
        assert_eq!(v.validate(CONTEXT), Ok(()));
        let said = v.validate(text.as_bytes());
        assert_eq!(said, validate(text.as_bytes()), "{name}: {text}");
        assert_eq!(said, reference::validate(text.as_bytes()), "{name}");
        assert_eq!(v.shapes(), (1, u64::from(fits)), "{name}: {said:?}");
    }
}

/// The parts a text's shape is made of: its fixed bytes, and what
/// follows each run of them.
#[test]
fn shapes_keep_names_and_brackets_and_cut_out_values() {
    let render = |text: &str| {
        let mut shapes = ContextShapes::fixed();
        shapes.learn(text.as_bytes(), None);
        shapes.known[0]
            .iter()
            .map(|p| {
                let bytes = String::from_utf8_lossy(&p.bytes[..usize::from(p.len)]);
                assert_eq!(p.want, (1 << p.len) - 1);
                match p.then {
                    Then::Nothing => format!("{bytes}|"),
                    Then::Str => format!("{bytes}<str>"),
                    Then::Num => format!("{bytes}<num>"),
                    Then::Value(depth) => format!("{bytes}<value {depth}>"),
                }
            })
            .collect::<String>()
    };
    let cases = [
        (
            "an object",
            r#"{"a":"x","b":1}"#,
            r#"{"a":<str>,"b":<num>}|"#,
        ),
        (
            "nested objects, arrays and literals",
            r#"{"a":{"b":[1,{"c":2}],"d":true},"e":null}"#,
            r#"{"a":{"b":<value 2>,"d":<value 2>},"e":<value 1>}|"#,
        ),
        (
            "a name with escapes",
            r#"{"a\"b:":"c"}"#,
            r#"{"a\"b:":<str>}|"#,
        ),
        (
            "a name spaced from its colon",
            "{\"a\" :\"b\"}",
            "{\"a\" :<str>}|",
        ),
        (
            "fixed bytes longer than sixteen",
            r#"{"a_member_name_longer_than_sixteen":0}"#,
            r#"{"a_member_name_|longer_than_sixt|een":<num>}|"#,
        ),
        ("an array alone: no shape", "[1,2]", ""),
        ("a string alone: no shape", r#""s""#, ""),
        ("a number and spaces", " 1 ", " <num> |"),
    ];
    for (name, text, parts) in cases {
        assert_eq!(render(text), parts, "{name}");
    }
}

/// Two kinds of context, in turn and in runs: both shapes are kept,
/// and the one that fitted or was learned last is compared first.
#[test]
fn two_shapes_are_known_at_once() {
    let a = |i: usize| format!(r#"{{"user":"u{i}","age":{i}}}"#);
    let b = |i: usize| format!(r#"{{"user":"u{i}","city":"c{i}","age":{i}}}"#);
    let c = |i: usize| format!(r#"{{"item":"i{i}"}}"#);
    let shape = |text: &str| {
        let mut shapes = ContextShapes::fixed();
        shapes.learn(text.as_bytes(), None);
        format!("{:?}", shapes.known[0])
    };
    // (name, text, whether it had a shape known)
    let cases = [
        ("a, nothing known", a(0), false),
        ("a again", a(1), true),
        ("b, not known", b(2), false),
        ("a, known second", a(3), true),
        ("a again, now first", a(4), true),
        ("b, known second", b(5), true),
        ("c, not known: a forgotten", c(6), false),
        ("b, known second", b(7), true),
        ("a, not known", a(8), false),
    ];
    let mut v = remembering();
    for (k, (name, text, fitted)) in cases.into_iter().enumerate() {
        let (tries, hits) = v.shapes();
        assert_eq!(v.validate(text.as_bytes()), Ok(()), "{name}");
        // Every text but the first is compared.
        assert_eq!(
            v.shapes(),
            (tries + u64::from(k > 0), hits + u64::from(fitted)),
            "{name}"
        );
        let known = &v.memos.as_ref().unwrap().shapes.known[0];
        assert_eq!(format!("{known:?}"), shape(&text), "{name}");
    }
}

#[test]
fn shapes_that_never_repeat_rest_their_memo() {
    let mut v = Validator::new();
    let text = |i: usize| format!(r#"{{"member{i}":{i}}}"#);
    for i in 0..3 * SAMPLE as usize {
        assert_eq!(v.validate(text(i).as_bytes()), Ok(()));
    }
    // The first text teaches the first shape; no text after it has the
    // shape of the one before: after a sample, the texts are neither
    // compared nor learned from.
    assert_eq!(v.shapes(), (u64::from(SAMPLE), 0));
}

const CONTEXT: &[u8] = br#"{"GUser":{"id":"u87734","major":"med","hobby":"hiking","age":65},"_multi":[{"TAction":{"a_id":"a6","topic":"science","len":92}},{"TAction":{"a_id":"a7","topic":"finance","len":74}}]}"#;

/// Texts to mutate: contexts as the loop writes them, and the corners
/// of the grammar, of UTF-8, of nesting and of the scanner's words.
fn seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = [
        CONTEXT,
        br#"{"_slot_id":1,"GUser":{"id":"u1","f":[1.5,-2e-3,0]},"_multi":[{"a":1},{"a":2}],"_slots":[{"_id":"s1"},{"_id":"s2","_inc":[0,1]}]}"#,
        b"{\n  \"GUser\" : {\"id\" :\t\"u1\" ,\r\n \"age\": 65 } ,\n  \"_multi\" : [ { } , [ ] , null , true , false ]\n}\n",
        br#"{"a":"x\"y\\z\/\b\f\n\r\t","b":"\u00e9\uD83D\uDE00\u12aB\uFFFF","c":"\\\\\\\""}"#,
        "{\"name\":\"Jos\u{e9}\",\"city\":\"Z\u{fc}rich\",\"emoji\":\"\u{1F600}\",\"cjk\":\"\u{4e2d}\u{6587}\u{5b57}\u{7b26}\u{6d4b}\u{8bd5}\"}".as_bytes(),
        br#"["abcdefghijklmnopqrstuvwxyz0123456789","","a","abcdefg","abcdefgh","abcdefghi"]"#,
        br#"[0,-0,1,-1,12.5,-0.0e0,1E+10,2e-3,123456789012345678901234567890,0.000001,9.99E-99]"#,
        br#"{"a":[],"b":{},"c":[{}],"d":[[],[[]]],"e":true,"f":false,"g":null}"#,
        b"\"\xff\"",
        b"{\"a\":\"\xc3\"}",
        b"{\"a\":\"\xc3\x28\",\"b\":\"\xc3\xa9\"}",
        b"{\"a\":\"\xed\xa0\x80\"}",
        b"{\"a\":\"\xf4\x90\x80\x80\",\"b\":\"\xf0\x9f\x98\x80\"}",
        b"[\"\xc0\xaf\",\"\xe2\x82\"]",
        b"{\"a\":1}\xc3\xa9",
        b"{\xc3\xa9:1}",
        b"[1,\xff]",
        b"[tru\xff]",
        b"{\"a\":,\"b\":\"\xff\"}",
        b"[\"\xc3\xa9\", 1 2, \"\xff\"]",
    ]
    .iter()
    .map(|s| s.to_vec())
    .collect();
    for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1] {
        seeds.push([b"[".repeat(depth), b"]".repeat(depth)].concat());
        seeds.push([b"[ ".repeat(depth), b" ]".repeat(depth)].concat());
        seeds.push([b"{\"a\":".repeat(depth), b"1".to_vec(), b"}".repeat(depth)].concat());
        seeds.push(
            [
                b"{ \"a\" :\n".repeat(depth),
                b"1".to_vec(),
                b"\n}".repeat(depth),
            ]
            .concat(),
        );
        let open = b"[{\"k\":".repeat(depth / 2);
        let close = b"}]".repeat(depth / 2);
        seeds.push([open, b"\"v\"".to_vec(), close].concat());
    }
    seeds
}

/// Bytes that matter to the grammar, the scanner or UTF-8.
const BYTES: &[u8] =
    b"\"\\{}[],: \t\n\r01-.eEu+atfn/\x00\x1f\x7f\x80\xa9\xbf\xc3\xe2\xed\xf0\xf4\xff";

/// Every outcome there is: the tests below must meet them all.
const OUTCOMES: [&str; 15] = [
    "ok",
    "invalid UTF-8",
    "a value was expected",
    "nested too deeply",
    "text after the value",
    "`,` or `}` was expected",
    "`,` or `]` was expected",
    "a member name was expected",
    "`:` was expected",
    "unterminated string",
    "bad \\u escape",
    "bad escape",
    "control character in a string",
    "unknown literal",
    "malformed number",
];

#[test]
fn agrees_with_the_reference_on_mutations() {
    let mut seen = BTreeSet::new();
    let mut rng = Rng::new(0x6a73_6f6e);
    for seed in seeds() {
        seen.insert(same(&seed));
        // Cut or delete every byte, but of the deeply nested seeds, whose
        // interesting bytes are in the middle, only one in 16 elsewhere:
        // the test must stay quick.
        let middle = seed.len() / 2;
        let cuts = (0..seed.len())
            .filter(|&cut| seed.len() < 600 || cut.abs_diff(middle) < 64 || cut % 16 == 0);
        for cut in cuts {
            seen.insert(same(&seed[..cut]));
            let mut deleted = seed.clone();
            deleted.remove(cut);
            seen.insert(same(&deleted));
        }
        for _ in 0..200 {
            let mut text = seed.clone();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(text.len() + 1);
                let byte = if rng.below(4) == 0 {
                    rng.next() as u8
                } else {
                    BYTES[rng.below(BYTES.len())]
                };
                match (rng.below(4), text.get_mut(at)) {
                    (0, Some(b)) => *b ^= 1 << rng.below(8),
                    (1, Some(b)) => *b = byte,
                    (2, Some(_)) => {
                        text.remove(at);
                    }
                    _ => text.insert(at, byte),
                }
            }
            seen.insert(same(&text));
        }
    }
    assert_eq!(seen, OUTCOMES.into_iter().collect());
}

#[test]
fn agrees_with_the_reference_on_every_byte_of_a_context() {
    let mut seen = BTreeSet::new();
    for at in 0..=CONTEXT.len() {
        for &byte in BYTES {
            let mut text = CONTEXT.to_vec();
            text.insert(at, byte);
            seen.insert(same(&text));
            text.remove(at);
            if let Some(b) = text.get_mut(at) {
                *b = byte;
                seen.insert(same(&text));
            }
        }
    }
    assert!(seen.len() > 10, "{seen:?}");
    // Most of those texts kept an action of the context whole: the
    // remembering validator stepped over it, and agreed all the same.
    let (_, hits) = REMEMBERING.with(|v| v.borrow().lookups());
    assert!(hits > 1000, "{hits} hits");
    // And most of the valid ones changed a value only: they had the
    // context's shape, and their values were checked alone.
    let (_, fitted) = REMEMBERING.with(|v| v.borrow().shapes());
    assert!(fitted > 1000, "{fitted} texts had a shape known");
}

#[test]
fn agrees_with_the_reference_on_short_texts() {
    let alphabet = b"\"\\{}[],: 01-.eutx\x01\xc3\xa9\xff";
    same(b"");
    for &a in alphabet {
        for &b in alphabet {
            same(&[a, b]);
            for &c in alphabet {
                same(&[a, b, c]);
            }
        }
        same(&[a]);
    }
}

#[test]
fn agrees_with_the_reference_wherever_a_string_stops() {
    // The scanner reads strings sixteen bytes to a compare: put each
    // kind of byte a string stops at in each place in and across those
    // chunks, and near the end of the text.
    for len in 0..40 {
        for at in 0..len {
            for &stop in b"\"\\\x00\x1f\x80\xa9\xc3\xffu" {
                let mut body = vec![b'a'; len];
                body[at] = stop;
                for (open, close) in [("\"", "\""), ("\"", ""), ("[\"", "\"]"), ("{\"", "\":0}")] {
                    same(&[open.as_bytes(), &body, close.as_bytes()].concat());
                }
            }
        }
    }
}
