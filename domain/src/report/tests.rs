//! Unit tests of the report on a hand-made task: every value below was worked out by hand.

use super::draw::{layout, scores_csv};
use super::*;
use crate::ids::{AssignmentId, ExampleId, StudyId};
use crate::place::{Phase, PlaceStatus};
use crate::shots::ShotFile;
use crate::task::{Label, NoAnswer};

fn spec() -> TaskSpec {
    let label = |n: &str| Label {
        name: n.into(),
        definition: String::new(),
        example: String::new(),
    };
    TaskSpec {
        name: "Toy".into(),
        family: Family::Classification,
        description: String::new(),
        labels: vec![label("negative"), label("positive")],
        question_types: Vec::new(),
        no_answer: NoAnswer::EmptyList,
        metric: None,
    }
}

fn gold(l: &str) -> Gold {
    Gold {
        official: vec![l.into()],
        spans: vec![crate::spans::Span::new(l, None)],
    }
}

/// Test items 1..=4 with golds pos, neg, pos, neg; training items keyed "t1".."t4".
pub(super) fn data() -> TaskData {
    let golds = ["positive", "negative", "positive", "negative"];
    let keys = |n: usize| (1..=n).map(|i| format!("t{i}")).collect::<HashSet<_>>();
    TaskData {
        spec: spec(),
        test_golds: golds
            .iter()
            .enumerate()
            .map(|(i, g)| (ExampleId(i as i64 + 1), gold(g)))
            .collect(),
        shot_sets: [((2, 1), keys(2)), ((4, 1), keys(4))].into_iter().collect(),
        words: HashMap::new(),
        systems: Vec::new(),
    }
}

fn item(
    training: bool,
    id: i64,
    key: &str,
    answer: Option<&str>,
    gold: &str,
    conf: u8,
) -> ItemRecord {
    let s1 = answer.map(|a| f64::from(u8::from(a == gold)));
    ItemRecord {
        phase: if training {
            Phase::Training
        } else {
            Phase::Test
        },
        example_id: ExampleId(id),
        content_key: key.into(),
        answer: answer.map(|a| vec![a.to_string()]),
        skipped: false,
        confidence: Some(conf),
        s1,
        s1_any_of: s1,
        shown_at: Some(1_000),
        submitted_at: Some(3_000),
        signals: None,
    }
}

/// An annotator: `train` = how many of the k training items they got right (in order);
/// `test` = their four test answers.
pub(super) fn annotator(n: i64, k: u32, right: usize, test: [&str; 4]) -> AnnotatorRecord {
    let mut items: Vec<ItemRecord> = (1..=k as usize)
        .map(|i| {
            let a = if i <= right { "positive" } else { "negative" };
            item(
                true,
                100 + i as i64,
                &format!("t{i}"),
                Some(a),
                "positive",
                3,
            )
        })
        .collect();
    let golds = ["positive", "negative", "positive", "negative"];
    items.extend(test.iter().zip(golds).enumerate().map(|(i, (a, g))| {
        item(
            false,
            i as i64 + 1,
            "",
            Some(a),
            g,
            if a == &g { 5 } else { 2 },
        )
    }));
    AnnotatorRecord {
        assignment: AssignmentId(n),
        study: StudyId(1),
        worker: format!("w{n}"),
        task: "Toy".into(),
        k,
        status: PlaceStatus::Finished,
        training_split: (k > 0).then_some(1),
        started_at: 0,
        finished_at: Some(1_800_000),
        last_activity: 1_800_000,
        items,
        pages: Default::default(),
    }
}

const P: &str = "positive";
const N: &str = "negative";

pub(super) fn report() -> Report {
    let annotators = vec![
        // Zero-shot: test S1 1, 0.75, 0.5.
        annotator(1, 0, 0, [P, N, P, N]),
        annotator(2, 0, 0, [P, N, P, P]),
        annotator(3, 0, 0, [P, P, P, P]),
        // 2-shot, training 2/2, 2/2, 0/2 -> the third is 1.0 below the others: flagged.
        annotator(4, 2, 2, [P, N, P, N]),
        annotator(5, 2, 2, [P, N, N, N]),
        annotator(6, 2, 0, [N, P, N, P]),
        // 4-shot, training 4/4, 3/4, 2/4.
        annotator(7, 4, 4, [P, N, P, N]),
        annotator(8, 4, 3, [P, N, P, N]),
        annotator(9, 4, 2, [P, N, P, N]),
    ];
    build(
        &[("Toy".to_string(), data())].into_iter().collect(),
        &annotators,
        &rules(vec![(2, 1), (4, 1)], false),
    )
}

/// Study 1's configuration: scenarios 0, 2 and 4, 12.50 an hour, margin 0.5.
pub(super) fn config(allow_unnested: bool) -> crate::study::StudyConfig {
    crate::study::StudyConfig {
        scenarios: vec![0, 2, 4],
        hourly_rate_cents: 1250,
        filter_margin: 0.5,
        allow_unnested,
        ..Default::default()
    }
}

/// Study 1's rules with the given training files, its analysis plan frozen before its data.
pub(super) fn rules(files: Vec<ShotFile>, allow_unnested: bool) -> HashMap<StudyId, StudyRules> {
    let config = config(allow_unnested);
    let json = crate::analysis_plan::declare("Toy", &config, 4).canonical_json();
    let rules = StudyRules {
        files: files.clone(),
        chain: files,
        ..StudyRules::of(&config)
    }
    .with_frozen(&config, json, "0".repeat(64), 1_000)
    .unwrap();
    [(StudyId(1), rules)].into_iter().collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn main_table_mean_and_std_over_annotators() {
    let r = report();
    assert_eq!(r.shots, vec![0, 2, 4]);
    let cell = |t: &Tables, k| t.main.iter().find(|c| c.k == k).unwrap().official;
    let zero = cell(&r.all, 0);
    assert_eq!(zero.n, 3);
    assert!(close(zero.mean, 0.75));
    // Population std of 1, 0.75, 0.5: sqrt((0.0625 * 2) / 3).
    assert!(close(zero.std_pop, (0.125f64 / 3.0).sqrt()));
    // 2-shot: 1, 0.75, 0 -> mean 7/12; without the flagged third: 1, 0.75.
    assert!(close(cell(&r.all, 2).mean, 1.75 / 3.0));
    let kept = cell(&r.filtered, 2);
    assert_eq!(kept.n, 2);
    assert!(close(kept.mean, 0.875));
}

#[test]
fn the_filter_flags_the_low_trainee_only() {
    let r = report();
    let flagged: Vec<&str> = r
        .annotators
        .iter()
        .filter(|a| a.flagged)
        .map(|a| a.worker.as_str())
        .collect();
    // w9 (0.5) vs the others' mean (1 + 0.75) / 2 = 0.875: 0.375 below, within 0.5.
    assert_eq!(flagged, vec!["w6"]);
}

#[test]
fn training_tables_take_the_right_items() {
    let r = report();
    // Table 8 on the 2-shot items t1, t2: group 2 -> 1, 1, 0; group 4 -> all got t1, t2 right.
    let t8 = &r.all.table8;
    assert_eq!(t8.len(), 2);
    assert_eq!(t8[0].subset, Subset::Shots { k: 2 });
    assert_eq!((t8[0].group_k, t8[0].items), (2, 2));
    assert!(close(t8[0].spread.mean, 2.0 / 3.0));
    assert_eq!((t8[1].group_k, t8[1].spread.mean), (4, 1.0));
    // Table 9: group 4 on t3, t4: w7 1, w8 0.5, w9 0.
    let t9 = &r.all.table9[0];
    assert_eq!(t9.subset, Subset::NewIn { k: 4, without: 2 });
    assert_eq!(t9.items, 2);
    assert!(close(t9.spread.mean, 0.5));
}

#[test]
fn majority_vote_and_kappa() {
    let r = report();
    let zero = &r.all.scenarios[0];
    // Votes: P P P | N N P -> N | P P P | N P P -> P: 3 of 4 right.
    assert_eq!(zero.k, 0);
    assert!(close(zero.majority_s1, 0.75));
    assert_eq!(zero.ties, 0);
    // Kappa by hand: rows [0,3],[2,1],[0,3],[1,2]; P_i = 1, 1/3, 1, 1/3 -> P = 2/3;
    // p_neg = 3/12, p_pos = 9/12 -> Pe = 1/16 + 9/16 = 10/16; kappa = (2/3 - 5/8) / (3/8) = 1/9.
    assert_eq!(zero.agreement.items, 4);
    assert!(close(zero.agreement.value.unwrap(), 1.0 / 9.0));
    // The filtered 2-shot pair: P P | N N | P N -> tie, broken to "negative" (label order) | N N.
    let two = r.filtered.scenarios.iter().find(|s| s.k == 2).unwrap();
    assert_eq!((two.annotators, two.ties), (2, 1));
    assert!(close(two.majority_s1, 0.75));
    // All agree in the 4-shot group over both labels: kappa 1.
    assert_eq!(r.all.scenarios[2].agreement.value, Some(1.0));
}

#[test]
fn confidence_levels_and_pay() {
    let r = report();
    // Right test answers carry confidence 5, wrong ones 2.
    let level = |l: u8| {
        r.all
            .confidence
            .iter()
            .find(|c| c.level == l)
            .unwrap()
            .clone()
    };
    assert_eq!(level(5).accuracy, Some(1.0));
    assert_eq!(level(2).accuracy, Some(0.0));
    assert_eq!(level(3).answers, 0);
    assert_eq!(level(5).answers + level(2).answers, 36);
    // Half an hour at 12.50 an hour.
    assert!(r
        .annotators
        .iter()
        .all(|a| a.pay_cents == 625 && a.seconds == 1800.0));
    // Each item took 2 s.
    assert_eq!(r.annotators[8].seconds_on_items, 16.0);
}

#[test]
fn pay_rounds_half_up() {
    assert_eq!(pay_cents(3_600_000, 1200), 1200);
    // 1 s at 18 cents an hour = 0.005 cents -> 0; 100 s = 0.5 -> 1.
    assert_eq!(pay_cents(1_000, 18), 0);
    assert_eq!(pay_cents(100_000, 18), 1);
    assert_eq!(pay_cents(-5, 1200), 0);
}

#[test]
fn layouts_show_the_same_cells() {
    let r = report();
    let t5 = layout::main_table(&r, Which::All, false);
    assert_eq!(t5.header, vec!["Shots", "Toy"]);
    assert_eq!(t5.groups[1], ("Sentence classification".to_string(), 1));
    assert_eq!(
        t5.rows[0],
        vec!["0".to_string(), "75.0 ± 20.4 (n=3)".to_string()]
    );
    let csv = scores_csv::scores_csv(&r);
    assert!(csv.starts_with("table,annotators,study,scoring,task,family,k,subset,n,items,mean,std"));
    assert!(csv.contains("\ntable5,all,,official,Toy,classification,0,,3,,0.75,"));
    let md = layout::markdown(&r);
    assert!(md.contains("| 0 | 75.0 ± 20.4 (n=3) |"));
    assert!(
        md.contains("## Training sets of each study\n\n- Study 1 (Toy): 2_1 ⊂ 4_1\n"),
        "{md}"
    );
}

#[test]
fn a_skip_scores_zero_even_where_no_answer_is_right() {
    // Reading comprehension: test item 1 has no answer in its text, item 2 the answer "x".
    let mut data = data();
    data.spec.family = Family::ReadingComprehension;
    data.spec.labels = Vec::new();
    data.test_golds = [
        (
            ExampleId(1),
            Gold {
                official: vec![],
                spans: vec![],
            },
        ),
        (ExampleId(2), gold("x")),
    ]
    .into_iter()
    .collect();
    // Item 1 skipped, stored with the "no answer" score 1 (as before the rule); item 2 right.
    let skipped = ItemRecord {
        answer: Some(vec![]),
        skipped: true,
        confidence: None,
        s1: Some(1.0),
        s1_any_of: Some(1.0),
        ..item(false, 1, "", None, "", 3)
    };
    let mut a = annotator(1, 0, 0, [P, P, P, P]);
    a.items = vec![skipped, item(false, 2, "", Some("x"), "x", 3)];
    let mut tasks = HashMap::new();
    tasks.insert("Toy".to_string(), data);
    let r = build(&tasks, &[a], &rules(vec![], false));
    let s = &r.annotators[0];
    assert_eq!((s.test_s1, s.test_s1_any_of), (Some(0.5), Some(0.5)));
    assert_eq!(s.test_s1_answered, Some(1.0));
    assert_eq!((s.test_done, s.test_skips), (2, 1));
    let cell = &r.all.main[0];
    assert_eq!(
        (cell.test_items, cell.skipped, cell.skip_rate()),
        (2, 1, 0.5)
    );
    assert_eq!(cell.answered.unwrap().mean, 1.0);
    // A skip is never a vote: nobody answered item 1, so it has no majority answer and scores
    // 0 (not "no answer", which its empty gold would score 1); item 2 is right.
    assert_eq!(r.all.scenarios[0].majority_s1, 0.5);
    let skips = layout::skip_table(&r, Which::All);
    assert_eq!(
        skips.rows[0],
        vec![
            "0".to_string(),
            "50.0% (1 of 2); empty gold 100.0% (1 of 1); with gold 0.0% (0 of 1)".to_string()
        ]
    );
    let answered = layout::answered_table(&r, Which::All);
    assert_eq!(answered.rows[0][1], "100.0 ± 0.0 (n=1)");
    let md = layout::markdown(&r);
    assert!(
        md.contains("A skipped item is not an answer: it scores 0"),
        "{md}"
    );
    assert!(
        scores_csv::scores_csv(&r).contains("\nskips,all,,,Toy,reading_comprehension,0,,1,2,0.5,")
    );
}

#[test]
fn training_tables_follow_the_studys_chain() {
    // SQuAD v2's shape: the 2-shot set of split 1 lies within the 4-shot set of split 2.
    let keys = |p: &str, n: usize| (1..=n).map(|i| format!("{p}{i}")).collect::<HashSet<_>>();
    let mut data = data();
    data.shot_sets = [
        ((2, 1), keys("t", 2)),
        ((2, 2), keys("u", 2)),
        ((4, 1), keys("u", 4)),
        ((4, 2), keys("t", 4)),
    ]
    .into_iter()
    .collect();
    let mut annotators = vec![
        annotator(4, 2, 2, [P, N, P, N]),
        annotator(7, 4, 4, [P, N, P, N]),
        annotator(8, 4, 3, [P, N, P, N]),
    ];
    for a in annotators.iter_mut().filter(|a| a.k == 4) {
        a.training_split = Some(2);
    }
    let tasks: HashMap<String, TaskData> = [("Toy".to_string(), data)].into_iter().collect();
    let r = build(&tasks, &annotators, &rules(vec![(2, 1), (4, 2)], false));
    // The 4-shot group on the 2-shot items of its chain (2_1: t1, t2), not of split 2 (2_2).
    let t8 = r.all.table8.iter().find(|c| c.group_k == 4).unwrap();
    assert_eq!((t8.items, t8.spread.mean), (2, 1.0));
    // Table 9: 4_2 without 2_1 = t3, t4: w7 2/2, w8 1/2.
    let t9 = &r.all.table9[0];
    assert_eq!((t9.items, t9.spread.mean), (2, 0.75));
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert_eq!(r.shot_groups[0].files, vec![(2, 1), (4, 2)]);
    assert!(r.shot_groups[0].nested);
    // The same split number for both is not nested: allowed, and the report says so.
    let r = build(&tasks, &annotators, &rules(vec![(2, 1), (4, 1)], true));
    assert!(!r.shot_groups[0].nested);
    assert!(
        r.notes[0].contains("2_1 is not within 4_1"),
        "{:?}",
        r.notes
    );
    assert!(r.notes[0].contains("the admin allowed this"));
    assert!(layout::markdown(&r).contains("**Note:** Study 1 (Toy)"));
}

#[test]
fn a_training_cell_pooling_two_chains_gives_each_annotators_item_count() {
    // Study 1's 2-shot file holds t1, t2; study 2's holds t1 only: the 4-shot group's Table 8
    // cell pools 2 and 1 shared items, and says so.
    let keys = |n: usize| (1..=n).map(|i| format!("t{i}")).collect::<HashSet<_>>();
    let mut data = data();
    data.shot_sets = [
        ((2, 1), keys(2)),
        ((4, 1), keys(4)),
        ((2, 2), keys(1)),
        ((4, 2), keys(4)),
    ]
    .into_iter()
    .collect();
    let mut other = annotator(8, 4, 4, [P, N, P, N]);
    other.study = StudyId(2);
    let annotators = vec![
        annotator(4, 2, 2, [P, N, P, N]),
        annotator(7, 4, 4, [P, N, P, N]),
        other,
    ];
    let mut rl = rules(vec![(2, 1), (4, 1)], false);
    let second = StudyRules {
        files: vec![(2, 2), (4, 2)],
        chain: vec![(2, 2), (4, 2)],
        ..rl[&StudyId(1)].clone()
    };
    rl.insert(StudyId(2), second);
    let tasks: HashMap<String, TaskData> = [("Toy".to_string(), data)].into_iter().collect();
    let r = build(&tasks, &annotators, &rl);
    let t8 = r.all.table8.iter().find(|c| c.group_k == 4).unwrap();
    assert_eq!(
        (t8.items, t8.items_max, t8.items_text()),
        (1, 2, "1-2".to_string())
    );
    let two = r.all.table8.iter().find(|c| c.group_k == 2).unwrap();
    assert_eq!(two.items_text(), "2");
}
