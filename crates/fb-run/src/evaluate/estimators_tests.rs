//! The tallies against values vw-estimators 0.2.2 gives for the same
//! decisions (its `get()` printed with `repr`), and by hand where short.

use super::*;

fn close(got: Option<f64>, want: f64) {
    let got = got.expect("a value");
    assert!(
        (got - want).abs() <= 1e-12 * want.abs().max(1e-12),
        "{got} != {want}"
    );
}

fn close2(got: Option<[f64; 2]>, want: [f64; 2]) {
    let got = got.expect("an interval");
    close(Some(got[0]), want[0]);
    close(Some(got[1]), want[1]);
}

/// (p_log, r, p_pred, p_drop)
type Decision = (f64, f64, f64, f64);

/// (p_log, r, p_pred, p_drop)
const SHORT: [(f64, f64, f64, f64); 5] = [
    (0.5, 1.0, 1.0, 0.0),
    (0.25, 0.0, 0.0, 0.0),
    (0.8, 1.0, 0.5, 0.0),
    (0.1, 0.5, 1.0, 0.0),
    (0.5, 0.0, 1.0, 0.5),
];

#[rustfmt::skip]
const LONG: [(f64, f64, f64, f64); 40] = [
    (0.6, 1.0, 0.3, 0.25), (0.2, 0.25, 0.1, 0.0), (0.2, 0.25, 0.5, 0.0), (0.2, 0.0, 0.3, 0.25),
    (0.2, 1.0, 0.9, 0.0), (0.2, 0.0, 0.3, 0.0), (0.8, 0.25, 0.1, 0.25), (0.2, 0.25, 0.3, 0.0),
    (0.2, 0.0, 0.9, 0.0), (0.4, 0.25, 0.1, 0.25), (0.4, 1.0, 0.5, 0.0), (0.4, 0.25, 0.1, 0.0),
    (0.6, 0.0, 0.3, 0.25), (0.4, 0.0, 0.5, 0.0), (0.2, 0.25, 0.1, 0.0), (0.4, 0.25, 0.9, 0.25),
    (0.8, 1.0, 0.5, 0.0), (0.8, 1.0, 0.5, 0.0), (0.4, 0.25, 0.3, 0.25), (0.4, 0.25, 0.1, 0.0),
    (0.6, 1.0, 0.9, 0.0), (0.8, 0.25, 0.5, 0.25), (0.2, 0.25, 0.1, 0.0), (0.8, 1.0, 0.3, 0.0),
    (0.4, 1.0, 0.9, 0.25), (0.2, 0.25, 0.1, 0.0), (0.6, 0.25, 0.5, 0.0), (0.6, 0.25, 0.9, 0.25),
    (0.8, 0.0, 0.1, 0.0), (0.6, 0.25, 0.9, 0.0), (0.2, 0.25, 0.1, 0.25), (0.6, 1.0, 0.9, 0.0),
    (0.8, 0.0, 0.5, 0.0), (0.8, 0.0, 0.5, 0.25), (0.2, 0.0, 0.9, 0.0), (0.4, 0.0, 0.5, 0.0),
    (0.4, 1.0, 0.9, 0.25), (0.8, 0.0, 0.1, 0.0), (0.8, 0.25, 0.9, 0.0), (0.6, 1.0, 0.3, 0.25),
];

fn tally(data: &[(f64, f64, f64, f64)]) -> BanditFigures {
    let mut b = Bandit::default();
    for &(p, r, q, d) in data {
        b.add(p, r, q, d, 0.0);
    }
    b.finish()
}

#[test]
fn bandit_short_by_hand() {
    // w = 2, 0, 0.625, 10, 2; Σ w r = 7.625 over 5 decisions and Σ w = 14.625.
    let f = tally(&SHORT);
    close(f.ips, 1.525);
    close(f.snips, 7.625 / 14.625);
    close(f.cressie_read, 0.563_276_411_413_024_1);
    close2(f.cressie_read_ci, [0.0, 1.0]);
    close2(
        f.gaussian_ci,
        [-0.317_443_925_496_462_7, 2.859_110_592_163_129_5],
    );
    close2(f.clopper_pearson_ci, [0.009_622_757_440_684_524, 1.0]);
    close(
        Some(f.effective_sample_size),
        14.625 * 14.625 / (4.0 + 0.390_625 + 100.0 + 4.0),
    );
}

#[test]
fn bandit_long_as_vw_estimators() {
    let f = tally(&LONG);
    close(f.ips, 0.496_614_583_333_333_4);
    close(f.snips, 0.410_991_379_310_344_85);
    close(f.cressie_read, 0.416_193_917_378_756_5);
    close2(
        f.cressie_read_ci,
        [0.195_080_871_940_863_6, 0.639_985_545_502_143_7],
    );
    close2(
        f.gaussian_ci,
        [0.227_343_304_830_386_84, 0.766_593_262_333_792_3],
    );
    close2(
        f.clopper_pearson_ci,
        [0.183_970_194_161_264_12, 0.811_768_606_173_743_7],
    );
}

#[test]
fn bandit_undefined_cases() {
    let empty = Bandit::default().finish();
    assert_eq!(
        (empty.ips, empty.snips, empty.cressie_read),
        (None, None, None)
    );
    assert_eq!(empty.gaussian_ci, None);
    assert_eq!(empty.clopper_pearson_ci, None);
    // A reward outside [0, 1]: no Cressie-Read or Clopper-Pearson interval.
    let f = tally(&[(0.5, 2.0, 1.0, 0.0), (0.5, 0.0, 1.0, 0.0)]);
    assert_eq!(f.rewards_outside_unit, 1);
    assert_eq!((f.cressie_read_ci, f.clopper_pearson_ci), (None, None));
    close(f.ips, 2.0);
}

#[test]
fn merged_halves_equal_the_whole() {
    let (a, b) = LONG.split_at(17);
    let (mut x, mut y) = (Bandit::default(), Bandit::default());
    for &(p, r, q, d) in a {
        x.add(p, r, q, d, 0.0);
    }
    for &(p, r, q, d) in b {
        y.add(p, r, q, d, 0.0);
    }
    x.merge(&y);
    let (m, w) = (x.finish(), tally(&LONG));
    close(m.cressie_read, w.cressie_read.expect("a value"));
    close2(m.cressie_read_ci, w.cressie_read_ci.expect("an interval"));
}

#[test]
fn pdis_slots_as_vw_estimators() {
    let mut s = Slots::default();
    for d in [
        vec![(0.5, 1.0, 1.0), (0.5, 0.0, 0.5)],
        vec![(0.25, 0.0, 0.5), (1.0, 1.0, 1.0)],
        vec![(0.5, 1.0, 0.0)],
    ] {
        s.add(&d, 0.0, 16);
    }
    let f = s.finish();
    assert_eq!(f.len(), 2);
    close(f[0].value, 0.5);
    close(f[1].value, 0.333_333_333_333_333_4);
    close2(f[0].ci, [0.0, 1.0]);
    close2(f[1].ci, [0.0, 0.666_666_666_666_666_6]);
}

#[test]
fn pseudo_inverse_as_vw_estimators() {
    let mut s = PseudoInverse::default();
    s.add(&[(0.5, 1.0), (0.25, 0.0)], 1.0);
    s.add(&[(0.5, 0.5), (0.5, 0.5)], 0.0);
    s.add(&[(0.2, 1.0), (0.5, 1.0)], 1.0);
    let f = s.finish();
    // w = 1 − 2 + 2 + 0 = 1, then 1, then 1 − 2 + 5 + 2 = 6: (1 + 0 + 6) / 3.
    close(f.value, 7.0 / 3.0);
    close2(
        f.gaussian_ci,
        [-1.304_205_875_184_148_3, 5.970_872_541_850_815],
    );
}

#[test]
fn compensated_sum_keeps_small_terms() {
    let mut s = Sum::default();
    s.add(1e16);
    for _ in 0..10 {
        s.add(1.0);
    }
    s.add(-1e16);
    assert_eq!(s.get(), 10.0);
}

/// The pair that shares sums while nothing is dropped gives, to the bit,
/// what a separate estimate and interval give: no drops at all, drops
/// from the first decision, from the middle, and merges of each with the
/// others (both sides sharing, one side, none).
#[test]
fn the_pair_equals_separate_tallies_to_the_bit() {
    let no_drops: Vec<_> = LONG.iter().map(|&(p, r, q, _)| (p, r, q, 0.0)).collect();
    let late: Vec<_> = no_drops
        .iter()
        .take(20)
        .chain(LONG.iter().skip(20))
        .copied()
        .collect();
    let cases: [(&str, &[Decision]); 4] = [
        ("no drops", &no_drops),
        ("drops from the first", &LONG),
        ("drops from the 21st", &late),
        ("short", &SHORT),
    ];
    let tally = |decisions: &[Decision]| {
        let (mut pair, mut est, mut ci) = (
            CressieReadPair::default(),
            CressieRead::default(),
            CressieReadInterval::default(),
        );
        for &(p, r, q, d) in decisions {
            pair.add(q / p, r, d);
            est.add(q / p, r);
            ci.add(q / p, r, d);
        }
        (pair, est, ci)
    };
    let bits = |v: Option<[f64; 2]>| v.map(|[a, b]| (a.to_bits(), b.to_bits()));
    for (name, decisions) in cases {
        let (pair, est, ci) = tally(decisions);
        assert_eq!(pair.estimate(), &est, "{name}");
        assert_eq!(pair.interval(), ci, "{name}");
        assert_eq!(bits(pair.ci()), bits(ci.get()), "{name}");
        assert_eq!(
            pair.interval_count().to_bits(),
            ci.count().to_bits(),
            "{name}"
        );
        for (other, more) in cases {
            let (mut merged, mut est, mut ci) = (pair, est, ci);
            let (p2, e2, c2) = tally(more);
            merged.merge(&p2);
            est.merge(&e2);
            ci.merge(&c2);
            let case = format!("{name} + {other}");
            assert_eq!(merged.estimate(), &est, "{case}");
            assert_eq!(merged.interval(), ci, "{case}");
        }
    }
}

/// The six sums kept from the first decision, as vw-estimators keeps
/// them: what `CressieRead` must equal to the bit, whether its weights
/// are all 1, none is, or the first other comes late, and after merges.
#[derive(Default, Clone, Copy)]
struct AllSix([Sum; 6]);

impl AllSix {
    fn add(&mut self, w: f64, r: f64) {
        for (s, x) in self.0.iter_mut().zip([1.0, w, w * w, w * r, w * w * r, r]) {
            s.add(x);
        }
    }

    fn merge(&mut self, o: &Self) {
        for (s, x) in self.0.iter_mut().zip(&o.0) {
            s.merge(x);
        }
    }
}

#[test]
fn unit_weights_are_not_kept_twice_and_change_nothing() {
    let ones: Vec<(f64, f64)> = LONG.iter().map(|&(_, r, _, _)| (1.0, r)).collect();
    let weights: Vec<(f64, f64)> = LONG.iter().map(|&(p, r, q, _)| (q / p, r)).collect();
    let late: Vec<(f64, f64)> = ones
        .iter()
        .take(25)
        .chain(weights.iter().skip(25))
        .copied()
        .collect();
    let cases: [(&str, &[(f64, f64)]); 4] = [
        ("weights all 1", &ones),
        ("no weight 1", &weights),
        ("others from the 26th", &late),
        ("none", &[]),
    ];
    let tally = |decisions: &[(f64, f64)]| {
        let (mut cr, mut six) = (CressieRead::default(), AllSix::default());
        for &(w, r) in decisions {
            cr.add(w, r);
            six.add(w, r);
        }
        (cr, six)
    };
    let same = |case: &str, cr: &CressieRead, six: &AllSix| {
        let whole = cr.sums();
        for (k, (got, want)) in whole.iter().zip(&six.0).enumerate() {
            assert_eq!(got, want, "{case}: sum {k}");
        }
        assert_eq!(cr.sumr, six.0[5], "{case}: Σr");
        assert_eq!(cr.count().to_bits(), six.0[0].get().to_bits(), "{case}");
    };
    for (name, decisions) in cases {
        let (cr, six) = tally(decisions);
        same(name, &cr, &six);
        for (other, more) in cases {
            let (mut cr, mut six) = (cr, six);
            let (cr2, six2) = tally(more);
            cr.merge(&cr2);
            six.merge(&six2);
            same(&format!("{name} + {other}"), &cr, &six);
        }
    }
}

/// `headline` gives `finish`'s IPS, SNIPS and their intervals to the
/// bit: empty, one decision, and decisions with drops and weights other
/// than 1.
#[test]
fn headline_is_finish_for_its_figures() {
    let cases: [(&str, &[Decision]); 3] = [
        ("empty", &[]),
        ("one", &[(0.3, 0.7, 1.0, 0.0)]),
        (
            "several",
            &[
                (0.3, 0.7, 1.0, 0.0),
                (0.6, 0.1, 0.0, 0.2),
                (0.25, 1.0, 0.5, 0.0),
                (0.9, 0.35, 1.0, 0.5),
            ],
        ),
    ];
    let bits = |x: Option<f64>| x.map(f64::to_bits);
    let bits2 = |x: Option<[f64; 2]>| x.map(|a| a.map(f64::to_bits));
    for (name, decisions) in cases {
        let mut b = Bandit::default();
        for &(p, r, q, d) in decisions {
            b.add(p, r, q, d, 0.0);
        }
        let (h, f) = (b.headline(), b.finish());
        assert_eq!(h.decisions, f.decisions, "{name}");
        assert_eq!(bits(h.ips), bits(f.ips), "{name}");
        assert_eq!(bits(h.snips), bits(f.snips), "{name}");
        assert_eq!(bits2(h.snips_ci), bits2(f.snips_ci), "{name}");
        assert_eq!(bits2(h.gaussian_ci), bits2(f.gaussian_ci), "{name}");
        assert_eq!(h.ips.is_some(), !decisions.is_empty(), "{name}");
    }
}

#[test]
fn headline_alone_gives_the_bandits_bits() {
    // `fb stats` keeps only the headline sums; `fb evaluate` keeps them
    // inside a Bandit. Both must show the same bits, merged or not.
    // (case, decisions, where the tally is cut and merged)
    let cases: [(&str, &[Decision], Option<usize>); 5] = [
        ("empty", &[], None),
        ("one", &LONG[..1], None),
        ("short, drops", &SHORT, None),
        ("long", &LONG, None),
        ("long, merged at 17", &LONG, Some(17)),
    ];
    for (case, data, cut) in cases {
        let (mut hs, mut bs) = (vec![Headline::default()], vec![Bandit::default()]);
        for (i, &(p, r, q, d)) in data.iter().enumerate() {
            if Some(i) == cut {
                hs.push(Headline::default());
                bs.push(Bandit::default());
            }
            hs.last_mut().expect("a tally").add(p, r, q, d);
            bs.last_mut().expect("a tally").add(p, r, q, d, 0.0);
        }
        let (mut h, mut b) = (hs.remove(0), bs.remove(0));
        for (x, y) in hs.iter().zip(&bs) {
            h.merge(x);
            b.merge(y);
        }
        let (hf, bf) = (h.figures(), b.headline());
        assert_eq!(format!("{hf:?}"), format!("{bf:?}"), "{case}");
        let full = b.finish();
        for (name, a, z) in [
            ("ips", hf.ips, full.ips),
            ("snips", hf.snips, full.snips),
            (
                "gaussian low",
                hf.gaussian_ci.map(|c| c[0]),
                full.gaussian_ci.map(|c| c[0]),
            ),
            (
                "snips high",
                hf.snips_ci.map(|c| c[1]),
                full.snips_ci.map(|c| c[1]),
            ),
        ] {
            assert_eq!(a.map(f64::to_bits), z.map(f64::to_bits), "{case}: {name}");
        }
        assert_eq!(h.decisions() as usize, data.len(), "{case}");
    }
}
