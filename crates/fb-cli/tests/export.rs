//! `fb export` as a user runs it: every row of a folder of logs, in a file
//! every Arrow and Parquet reader takes, never half-written.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use arrow_array::RecordBatch;
use common::{arrow_batches, data, fb, p, parquet_batches, rows, scratch_dir};

fn lines_of(dir: &str) -> usize {
    fb(&["convert", "-q", dir]).stdout.lines().count()
}

/// The rows of `batches` as one batch.
fn one_batch(batches: &[RecordBatch]) -> RecordBatch {
    arrow_select::concat::concat_batches(&batches[0].schema(), batches).unwrap()
}

#[test]
fn export_writes_every_joined_event_in_each_format() {
    let dir = scratch_dir("export");
    let logs = data("valid_joined_logs");
    let want = lines_of(p(&logs));
    assert!(want > 100);
    let mut files = Vec::new();
    for threads in ["1", "2"] {
        let arrow = dir.join(format!("t{threads}.arrow"));
        let out = fb(&[
            "export",
            "-q",
            "--format",
            "arrow",
            "--batch-rows",
            "7",
            "--threads",
            threads,
            p(&logs),
            "-o",
            p(&arrow),
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let batches = arrow_batches(&arrow);
        assert_eq!(rows(&batches), want, "arrow, {threads} threads");
        // Batches of exactly --batch-rows, across the folder's files.
        let (last, whole) = batches.split_last().unwrap();
        assert!(whole.iter().all(|b| b.num_rows() == 7) && last.num_rows() <= 7);
        files.push(std::fs::read(&arrow).unwrap());

        let parquet = dir.join(format!("t{threads}.parquet"));
        let out = fb(&[
            "export",
            "-q",
            "--threads",
            threads,
            p(&logs),
            "-o",
            p(&parquet),
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(
            rows(&parquet_batches(&parquet)),
            want,
            "parquet, {threads} threads"
        );
        files.push(std::fs::read(&parquet).unwrap());
    }
    assert!(
        files[0] == files[2],
        "arrow: the same file on 1 and 2 threads"
    );
    assert!(
        files[1] == files[3],
        "parquet: the same file on 1 and 2 threads"
    );
    // An Arrow stream on standard output.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fb"))
        .args(["export", "-q", p(&logs), "-o", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let batches: Vec<RecordBatch> =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(out.stdout), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    assert_eq!(rows(&batches), want, "stream");
}

#[test]
fn export_keeps_an_existing_file_unless_forced() {
    let dir = scratch_dir("export-force");
    let target = dir.join("out.parquet");
    std::fs::write(&target, "keep me").unwrap();
    let log = data("valid_joined_logs/cb_simple.log");
    let out = fb(&["export", p(&log), "-o", p(&target)]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--force"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    let out = fb(&["export", "--force", p(&log), "-o", p(&target)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(std::fs::read(&target).unwrap().starts_with(b"PAR1"));
    // An input is never the output, forced or not.
    let out = fb(&["export", "--force", p(&target), "-o", p(&target)]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("is also an input"), "{}", out.stderr);
}

#[test]
fn a_partitioned_export_is_a_hive_tree_of_every_row() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::TimestampMicrosecondType;
    let dir = scratch_dir("export-partitioned");
    let logs = data("valid_joined_logs");
    let want = lines_of(p(&logs));
    for by in ["date", "hour"] {
        let out_dir = dir.join(by);
        let out = fb(&[
            "export",
            "-q",
            "--partition-by",
            by,
            p(&logs),
            "-o",
            p(&out_dir),
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let mut total = 0;
        let mut parts = 0;
        for day in std::fs::read_dir(&out_dir).unwrap() {
            let day = day.unwrap().path();
            let date = day.file_name().unwrap().to_string_lossy().into_owned();
            assert!(date.starts_with("date="), "{date}");
            let leaves: Vec<std::path::PathBuf> = if by == "hour" {
                std::fs::read_dir(&day)
                    .unwrap()
                    .map(|h| h.unwrap().path())
                    .collect()
            } else {
                vec![day.clone()]
            };
            for leaf in leaves {
                parts += 1;
                for batch in parquet_batches(&leaf.join("part-00000.parquet")) {
                    total += batch.num_rows();
                    let ts = batch
                        .column_by_name("timestamp")
                        .unwrap()
                        .as_primitive::<TimestampMicrosecondType>();
                    for &t in ts.values() {
                        // Every row's day is its directory's.
                        let days = t.div_euclid(86_400_000_000);
                        let first = data_day(&date[5..]);
                        assert_eq!(days, first, "{by}: {leaf:?}");
                    }
                }
            }
        }
        assert!(parts > 1, "{by}: {parts} partitions");
        assert_eq!(total, want, "{by}");
    }
}

/// Days since 1970 of `YYYY-MM-DD`.
fn data_day(date: &str) -> i64 {
    let mut it = date.split('-').map(|x| x.parse::<i64>().unwrap());
    let (y, m, d) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
    fb_schema::calendar::days_from_civil(y, m as u32, d as u32)
}

/// `--columns` writes those columns of the full export, in that order,
/// in each format; a wrong name is a usage error that lists the columns.
#[test]
fn export_columns_are_the_full_exports_columns() {
    let dir = scratch_dir("export-columns");
    let logs = data("valid_joined_logs");
    let full = dir.join("full.arrow");
    let out = fb(&[
        "export",
        "-q",
        "--format",
        "arrow",
        p(&logs),
        "-o",
        p(&full),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let full = one_batch(&arrow_batches(&full));
    let schema = full.schema();
    let at = |n: &str| schema.index_of(n).unwrap();
    let want = full
        .project(&[at("reward"), at("event_id"), at("outcomes")])
        .unwrap();

    let narrow = dir.join("narrow.arrow");
    let out = fb(&[
        "export",
        "-q",
        "--format",
        "arrow",
        "--columns",
        "reward,event_id,outcomes",
        p(&logs),
        "-o",
        p(&narrow),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(one_batch(&arrow_batches(&narrow)), want);

    let parquet = dir.join("narrow.parquet");
    let out = fb(&[
        "export",
        "-q",
        "--columns",
        "reward,event_id,outcomes",
        p(&logs),
        "-o",
        p(&parquet),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let got = one_batch(&parquet_batches(&parquet));
    assert_eq!(got.columns(), want.columns());

    struct Case {
        name: &'static str,
        args: &'static [&'static str],
        says: &'static str,
    }
    let cases = [
        Case {
            name: "unknown column",
            args: &["--columns", "reward,rewards"],
            says: "no column `rewards`; the columns are event_id",
        },
        Case {
            name: "twice",
            args: &["--columns", "reward,reward"],
            says: "column `reward` chosen twice",
        },
        Case {
            name: "partitions without their timestamp",
            args: &["--columns", "reward", "--partition-by", "date"],
            says: "add `timestamp` to --columns",
        },
    ];
    for case in cases {
        let bad = dir.join(format!("{}.out", case.name.replace(' ', "-")));
        let mut args = vec!["export", "-q"];
        args.extend_from_slice(case.args);
        args.extend_from_slice(&[p(&logs), "-o", p(&bad)]);
        let out = fb(&args);
        assert_eq!(out.code, 2, "{}: {}", case.name, out.stderr);
        assert!(
            out.stderr.contains(case.says),
            "{}: {}",
            case.name,
            out.stderr
        );
        assert!(!bad.exists(), "{}: nothing written", case.name);
    }
}

/// A log of each problem type from `fb gen` (apprentice CCB too: its slot
/// rewards are not its outcomes'), with the flags that join it.
fn generated_logs(dir: &std::path::Path) -> Vec<(String, std::path::PathBuf, Vec<&'static str>)> {
    let kinds: [(&str, &[&str]); 6] = [
        ("cb", &[]),
        ("ccb", &["--outcomes", "3", "--reward", "uniform:-1:4"]),
        ("ccb", &["--apprentice", "--outcomes", "2"]),
        ("slates", &[]),
        ("ca", &[]),
        ("multistep", &[]),
    ];
    let mut logs = Vec::new();
    for (i, (kind, extra)) in kinds.into_iter().enumerate() {
        let log = dir.join(format!("gen-{i}-{kind}.fb"));
        let mut args = vec!["gen", "-q", "--problem-type", kind, "--events", "400"];
        args.extend_from_slice(&["--seed", "3", "-o", p(&log)]);
        args.extend_from_slice(extra);
        let out = fb(&args);
        assert_eq!(out.code, 0, "{kind}: {}", out.stderr);
        let flags = if kind == "multistep" {
            vec!["--multistep"]
        } else {
            vec![]
        };
        logs.push((format!("generated {kind} {extra:?}"), log, flags));
    }
    logs
}

/// The rows `fb export` writes of `log` (Parquet), and the lines of `fb
/// convert`, with the same `flags`.
fn export_and_convert(
    dir: &std::path::Path,
    log: &std::path::Path,
    flags: &[&str],
) -> (RecordBatch, Vec<serde_json::Value>) {
    let parquet = dir.join("rows.parquet");
    let mut args = vec!["export", "-q", "--force"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&[p(log), "-o", p(&parquet)]);
    let out = fb(&args);
    assert_eq!(out.code, 0, "{log:?}: {}", out.stderr);
    let rows = one_batch(&parquet_batches(&parquet));
    let mut args = vec!["convert", "-q"];
    args.extend_from_slice(flags);
    args.push(p(log));
    let lines: Vec<serde_json::Value> = fb(&args)
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), rows.num_rows(), "{log:?}");
    (rows, lines)
}

/// One float of a DSJSON line.
fn number(line: &serde_json::Value, path: &[&str]) -> f32 {
    let mut v = line;
    for key in path {
        v = &v[*key];
    }
    v.as_f64().unwrap_or_else(|| panic!("{path:?} in {line}")) as f32
}

/// The mean of the `reward` column per problem type is `fb stats --json`'s
/// `reward_mean` (the README's DuckDB query gives what stats says), and
/// every reward is the DSJSON line's cost negated: `_label_cost` (CA:
/// `_label_ca.cost`), each CCB slot's `_label_cost`, a Slates line's for
/// each of its slots; a CCB row's reward is the sum of its slots'.
#[test]
fn export_rewards_are_stats_and_dsjson_rewards() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Float32Type;
    use arrow_array::Array;
    let dir = scratch_dir("export-rewards");
    let mut cases = vec![(
        "corpus folder".to_string(),
        data("valid_joined_logs"),
        vec![],
    )];
    cases.extend(generated_logs(&dir));
    let mut kinds_seen = std::collections::BTreeSet::new();
    for (name, log, flags) in cases {
        let (rows, lines) = export_and_convert(&dir, &log, &flags);
        let col = |n: &str| rows.column_by_name(n).unwrap().clone();
        let kind = col("problem_type");
        let kind = kind.as_string::<i32>();
        let reward = col("reward");
        let reward = reward.as_primitive::<Float32Type>();
        let slots = col("slots");
        let slots = slots.as_list::<i32>();

        let mut args = vec!["stats", "--json", "-q"];
        args.extend_from_slice(&flags);
        args.push(p(&log));
        let stats: serde_json::Value = serde_json::from_str(&fb(&args).stdout).unwrap();
        let by_kind = stats["by_problem_type"].as_object().unwrap();
        let mut sums = std::collections::BTreeMap::<&str, (f64, u64)>::new();
        for r in 0..rows.num_rows() {
            let sum = sums.entry(kind.value(r)).or_default();
            sum.0 += f64::from(reward.value(r));
            sum.1 += 1;
        }
        assert_eq!(sums.len(), by_kind.len(), "{name}: {sums:?}");
        // The outcomes fb stats counts are those the rows hold.
        let outcomes = col("outcomes");
        let outcomes = outcomes.as_list::<i32>();
        let held: usize = (0..rows.num_rows()).map(|r| outcomes.value(r).len()).sum();
        assert_eq!(
            Some(held as u64),
            stats["outcomes"].as_u64(),
            "{name}: outcomes"
        );
        for (k, (total, n)) in &sums {
            kinds_seen.insert(k.to_string());
            let want = &by_kind[*k];
            assert_eq!(*n, want["events"].as_u64().unwrap(), "{name} {k}");
            let (mean, want) = (total / *n as f64, want["reward_mean"].as_f64().unwrap());
            assert!(
                (mean - want).abs() <= 1e-6 * want.abs().max(1.0),
                "{name} {k}: avg(reward) {mean}, fb stats {want}"
            );
        }

        assert_eq!(lines.len(), rows.num_rows(), "{name}");
        for (r, line) in lines.iter().enumerate() {
            let at = format!("{name} row {r}");
            let got = reward.value(r);
            let slot_rewards: Vec<f32> = match slots.is_null(r) {
                true => vec![],
                false => slots
                    .value(r)
                    .as_struct()
                    .column_by_name("reward")
                    .unwrap()
                    .as_primitive::<Float32Type>()
                    .values()
                    .to_vec(),
            };
            match kind.value(r) {
                "ccb" => {
                    let costs: Vec<f32> = line["_outcomes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| number(s, &["_label_cost"]))
                        .collect();
                    let want: Vec<f32> = costs.iter().map(|c| -c).collect();
                    assert_eq!(slot_rewards, want, "{at}: slot rewards");
                    let sum: f64 = want.iter().map(|&w| f64::from(w)).sum();
                    assert!(
                        (f64::from(got) - sum).abs() <= 1e-5 * sum.abs().max(1.0),
                        "{at}"
                    );
                }
                "slates" => {
                    let want = -number(line, &["_label_cost"]);
                    assert_eq!(got, want, "{at}");
                    let n = line["_outcomes"].as_array().unwrap().len();
                    assert_eq!(slot_rewards, vec![want; n], "{at}: slot rewards");
                }
                "ca" => assert_eq!(got, -number(line, &["_label_ca", "cost"]), "{at}"),
                _ => assert_eq!(got, -number(line, &["_label_cost"]), "{at}"),
            }
        }
    }
    let all = ["ca", "cb", "ccb", "multistep", "slates"];
    assert_eq!(kinds_seen.into_iter().collect::<Vec<_>>(), all);
}

/// The `outcomes` of a row are those of its DSJSON line (a CCB line's are
/// its slots' `_o`, slot by slot: an outcome for no slot is in neither),
/// and `baseline_actions` is the CCB line's `_ba`, int64 like `actions`,
/// null when the line has none.
#[test]
fn export_outcomes_and_baselines_are_the_dsjson_lines() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, Int32Type, Int64Type};
    use arrow_array::Array;
    let dir = scratch_dir("export-outcomes");
    let mut cases = vec![(
        "corpus folder".to_string(),
        data("valid_joined_logs"),
        vec![],
    )];
    cases.extend(generated_logs(&dir));
    let (mut dropped, mut baselines, mut absent) = (0, 0, 0);
    for (name, log, flags) in cases {
        let (rows, lines) = export_and_convert(&dir, &log, &flags);
        let base = rows.column_by_name("baseline_actions").unwrap();
        let actions = rows.column_by_name("actions").unwrap();
        assert_eq!(base.data_type(), actions.data_type(), "{name}");
        let base = base.as_list::<i32>();
        let kind = rows
            .column_by_name("problem_type")
            .unwrap()
            .as_string::<i32>();
        let outcomes = rows.column_by_name("outcomes").unwrap().as_list::<i32>();
        for (r, line) in lines.iter().enumerate() {
            let at = format!("{name} row {r}");
            let want: Vec<&serde_json::Value> = match kind.value(r) {
                "ca" => continue,
                "ccb" => line["_outcomes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|s| s["_o"].as_array().into_iter().flatten())
                    .collect(),
                _ => line["o"].as_array().unwrap().iter().collect(),
            };
            let got = outcomes.value(r);
            let got = got.as_struct();
            let ids = got.column_by_name("event_id").unwrap().as_string::<i32>();
            let value = got
                .column_by_name("value")
                .unwrap()
                .as_primitive::<Float32Type>();
            let index = got
                .column_by_name("index")
                .unwrap()
                .as_primitive::<Int32Type>();
            let index_id = got.column_by_name("index_id").unwrap().as_string::<i32>();
            let taken = got.column_by_name("action_taken").unwrap().as_boolean();
            assert_eq!(got.len(), want.len(), "{at}: outcomes");
            for (k, o) in want.iter().enumerate() {
                assert_eq!(
                    ids.value(k),
                    o["EventId"].as_str().unwrap(),
                    "{at} outcome {k}"
                );
                assert_eq!(taken.value(k), o["ActionTaken"] == true, "{at} outcome {k}");
                if let Some(v) = o["v"].as_f64() {
                    assert_eq!(value.value(k), v as f32, "{at} outcome {k}");
                }
                if let Some(i) = o["Index"].as_str() {
                    let got = match index.is_null(k) {
                        true => index_id.value(k).to_string(),
                        false => index.value(k).to_string(),
                    };
                    assert_eq!(got, i, "{at} outcome {k}");
                }
            }
            if kind.value(r) == "ccb" {
                match line["_ba"].as_array() {
                    Some(ba) => {
                        baselines += 1;
                        let got = base.value(r);
                        let got = got.as_primitive::<Int64Type>().values().to_vec();
                        let want: Vec<i64> = ba.iter().map(|b| b.as_i64().unwrap()).collect();
                        assert_eq!(got, want, "{at}: baseline");
                    }
                    None => {
                        absent += 1;
                        assert!(base.is_null(r), "{at}: no `_ba`, a baseline");
                    }
                }
            }
        }
        // Outcomes for no slot (the corpus has them: unknown slot ids,
        // indexes out of range) are counted where the joiner ignores them.
        let mut args = vec!["stats", "--json", "-q"];
        args.extend_from_slice(&flags);
        args.push(p(&log));
        let stats: serde_json::Value = serde_json::from_str(&fb(&args).stdout).unwrap();
        let reasons = &stats["skipped_by_reason"];
        for reason in ["unknown_slot_id", "slot_index_out_of_range"] {
            dropped += reasons[reason].as_u64().unwrap_or(0);
        }
    }
    assert!(dropped > 10, "{dropped} outcomes for no slot");
    assert!(
        baselines > 100 && absent > 50,
        "{baselines} with `_ba`, {absent} without"
    );
}

/// What `fb export` refuses, before reading anything: a usage error (exit
/// 2) that says what to do, and nothing written.
#[test]
fn export_refuses_outputs_it_cannot_write() {
    struct Case {
        name: &'static str,
        args: &'static [&'static str],
        says: &'static str,
    }
    let cases = [
        Case {
            name: "parquet on standard output",
            args: &["--format", "parquet", "-o", "-"],
            says: "--format parquet cannot be written to standard output",
        },
        Case {
            name: "batches of no rows",
            args: &["--batch-rows", "0"],
            says: "invalid value '0' for '--batch-rows <N>': expected a number of rows, at least 1",
        },
        Case {
            name: "row groups of no rows",
            args: &["--row-group-rows", "0"],
            says: "invalid value '0' for '--row-group-rows <N>': expected a number of rows, at least 1",
        },
        Case {
            name: "partitions with row groups of no rows",
            args: &["--row-group-rows", "0", "--partition-by", "date"],
            says: "expected a number of rows, at least 1",
        },
    ];
    let dir = scratch_dir("export-refused");
    let log = data("valid_joined_logs/cb_simple.log");
    for case in cases {
        let target = dir.join(case.name.replace(' ', "-"));
        let mut args = vec!["export", p(&log)];
        args.extend_from_slice(case.args);
        if !case.args.contains(&"-o") {
            args.extend_from_slice(&["-o", p(&target)]);
        }
        let out = fb(&args);
        assert_eq!(out.code, 2, "{}: {}", case.name, out.stderr);
        assert!(
            out.stderr.contains(case.says),
            "{}: {}",
            case.name,
            out.stderr
        );
        assert!(out.stdout.is_empty(), "{}: wrote to stdout", case.name);
        assert!(!target.exists(), "{}: wrote {target:?}", case.name);
    }
}

/// Parquet columns encoded on several threads make the file that arrow-rs'
/// own writer makes on one (`--no-caches`), for a file and a partitioned
/// tree, with row groups cut by rows.
#[test]
fn parquet_is_the_same_bytes_for_any_number_of_encoding_threads() {
    let dir = scratch_dir("export-encoding");
    let log = dir.join("gen.fb");
    let out = fb(&[
        "gen",
        "-q",
        "--problem-type",
        "ccb",
        "--events",
        "3000",
        "--seed",
        "7",
        "-o",
        p(&log),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    struct Case {
        name: &'static str,
        input: std::path::PathBuf,
        extra: &'static [&'static str],
    }
    let cases = [
        Case {
            name: "corpus folder, small row groups",
            input: data("valid_joined_logs"),
            extra: &["--row-group-rows", "50"],
        },
        Case {
            name: "generated CCB, row groups inside batches",
            input: log.clone(),
            extra: &["--row-group-rows", "700", "--batch-rows", "256"],
        },
        Case {
            name: "generated CCB by hour",
            input: log.clone(),
            extra: &["--partition-by", "hour", "--row-group-rows", "300"],
        },
    ];
    for case in &cases {
        let run = |name: &str, flags: &[&str]| {
            let target = dir.join(name);
            let mut args = vec!["export", "-q", p(&case.input), "-o", p(&target)];
            args.extend_from_slice(case.extra);
            args.extend_from_slice(flags);
            let out = fb(&args);
            assert_eq!(out.code, 0, "{}: {}", case.name, out.stderr);
            if target.is_dir() {
                let files = common::tree(&target);
                std::fs::remove_dir_all(&target).unwrap();
                files
            } else {
                let bytes = std::fs::read(&target).unwrap();
                std::fs::remove_file(&target).unwrap();
                vec![(String::new(), bytes)]
            }
        };
        let plain = run("plain", &["--no-caches", "--threads", "4"]);
        assert!(!plain.is_empty() && plain.iter().all(|(_, b)| b.starts_with(b"PAR1")));
        for threads in ["1", "2", "4"] {
            let lanes = run(&format!("t{threads}"), &["--threads", threads]);
            assert!(
                lanes == plain,
                "{}: --threads {threads} differs from the plain writer",
                case.name
            );
        }
    }
}

/// Arrow IPC written from the pieces that several threads hand over is
/// the file, and the stream, that arrow-ipc's own writer makes of the
/// joined batches (`--no-caches`).
#[test]
fn arrow_ipc_is_the_same_bytes_from_pieces_or_joined() {
    let dir = scratch_dir("export-ipc-pieces");
    let log = dir.join("gen.fb");
    // 3 MB: more than a worker's chunk, so that threads hand over pieces.
    let args = ["gen", "-q", "--problem-type", "ccb", "--events", "3000"];
    let out = fb(&[&args[..], &["--seed", "9", "-o", p(&log)]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let target = dir.join("out.arrow");
    let cases: [(&str, &[&str]); 2] = [
        ("batches of 100 rows", &["--batch-rows", "100"]),
        ("default batches", &[]),
    ];
    for (name, extra) in cases {
        let file = |flags: &[&str]| {
            let mut args = vec!["export", "-q", "--format", "arrow", "--force", p(&log)];
            args.extend_from_slice(&["-o", p(&target)]);
            args.extend_from_slice(extra);
            args.extend_from_slice(flags);
            let out = fb(&args);
            assert_eq!(out.code, 0, "{name}: {}", out.stderr);
            std::fs::read(&target).unwrap()
        };
        let stream = |flags: &[&str]| {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_fb"))
                .args(["export", "-q", p(&log), "-o", "-"])
                .args(extra)
                .args(flags)
                .output()
                .unwrap();
            assert!(out.status.success(), "{name}: stream");
            out.stdout
        };
        let plain = ["--no-caches", "--threads", "4"];
        let (plain_file, plain_stream) = (file(&plain), stream(&plain));
        assert!(plain_file.starts_with(b"ARROW1") && plain_stream.len() > 1000);
        for threads in ["1", "2", "4"] {
            let flags = ["--threads", threads];
            assert!(
                file(&flags) == plain_file,
                "{name}: file, {threads} threads"
            );
            assert!(
                stream(&flags) == plain_stream,
                "{name}: stream, {threads} threads"
            );
        }
    }
}
