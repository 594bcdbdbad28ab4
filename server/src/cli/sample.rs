//! `sample`: CLUES-style nested training files from a pool of CLUES JSONL lines.

use super::args::SampleArgs;
use store::error::{Error, Result};

/// `sample`: writes `<prefix>_test.jsonl` and `<prefix>_train_<k>_<split>.jsonl`, split i for
/// the i-th of the seeds 100, 13, 21, 42, 87; lines are copied byte for byte from the pool.
pub(super) fn sample_clues(a: &SampleArgs) -> Result<()> {
    use domain::crossfit::nested::nested_sample;
    let label = a.pool.display().to_string();
    let text = std::fs::read_to_string(&a.pool)
        .map_err(|e| Error::io(format!("cannot read {label}"), e))?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut groups = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(l)
            .map_err(|e| Error::data(&label, Some(i + 1), format!("malformed JSON: {e}")))?;
        let question = v
            .get("question")
            .and_then(|q| q.as_str())
            .ok_or_else(|| Error::data(&label, Some(i + 1), "needs a `question` string"))?;
        groups.push(if a.per_question {
            question.to_string()
        } else {
            String::new()
        });
    }
    let seeds = domain::crossfit::sampler::CROSSFIT_SEEDS;
    let s = nested_sample(&groups, &a.ks, &seeds, a.test_size, 0)
        .map_err(|e| Error::data(&label, None, e))?;
    std::fs::create_dir_all(&a.out)
        .map_err(|e| Error::io(format!("cannot create {}", a.out.display()), e))?;
    let write = |name: String, idx: &[usize]| -> Result<()> {
        let body: String = idx.iter().map(|&i| format!("{}\n", lines[i])).collect();
        let path = a.out.join(&name);
        std::fs::write(&path, body)
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
        println!("{name}: {} lines", idx.len());
        Ok(())
    };
    write(format!("{}_test.jsonl", a.prefix), &s.test)?;
    for (split, (_, sets)) in s.seeds.iter().enumerate() {
        for (k, idx) in sets {
            write(format!("{}_train_{k}_{}.jsonl", a.prefix, split + 1), idx)?;
        }
    }
    Ok(())
}
