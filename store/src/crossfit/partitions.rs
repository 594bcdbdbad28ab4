//! CrossFit partitions (which tasks train and which test) and the average relative gain of a
//! method over a baseline on one, from the stored runs.

use super::run_scores;
use crate::catalog::corrupt;
use crate::error::{Error, OnUnique, PARTITION_NAME};
use domain::crossfit::partition::{arg_over_seeds, Partition};
use domain::wire::crossfit::ArgReport;
use sqlx::AnyPool;
use std::collections::{BTreeMap, BTreeSet};

pub async fn save_partition(pool: &AnyPool, name: &str, p: &Partition) -> Result<(), Error> {
    let name = name.trim();
    if name.is_empty() || name.len() > 100 {
        return Err(Error::Invalid(
            "a partition needs a name of 1 to 100 characters".into(),
        ));
    }
    let stored = sqlx::query("INSERT INTO crossfit_partitions (name, json) VALUES ($1, $2)")
        .bind(name)
        .bind(p.to_json())
        .execute(pool)
        .await;
    stored
        .on_unique(PARTITION_NAME, || {
            Error::Refused(format!(
                "a partition named {name:?} exists; partitions are never replaced"
            ))
        })
        .map(drop)
}

pub async fn partitions(pool: &AnyPool) -> Result<Vec<(String, Partition)>, Error> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT name, json FROM crossfit_partitions ORDER BY name")
            .fetch_all(pool)
            .await?;
    rows.into_iter()
        .map(|(n, j)| {
            Ok((
                n,
                Partition::from_json(&j).map_err(|e| corrupt("partition", e))?,
            ))
        })
        .collect()
}

pub async fn partition(pool: &AnyPool, name: &str) -> Result<Partition, Error> {
    partitions(pool)
        .await?
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, p)| p)
        .ok_or_else(|| Error::NotFound(format!("no partition named {name:?}")))
}

pub async fn arg_report(
    pool: &AnyPool,
    partition_name: &str,
    method: &str,
    baseline: &str,
) -> Result<ArgReport, Error> {
    let p = partition(pool, partition_name).await?;
    let runs = run_scores(pool).await?;
    let seeds: BTreeSet<u32> = runs
        .iter()
        .filter(|r| r.method == method || r.method == baseline)
        .map(|r| r.seed)
        .collect();
    if seeds.is_empty() {
        return Err(Error::NotFound(format!(
            "no runs of {method:?} or {baseline:?}"
        )));
    }
    let of = |m: &str, seed: u32| -> BTreeMap<String, f64> {
        runs.iter()
            .filter(|r| r.method == m && r.seed == seed)
            .filter_map(|r| Some((r.task.clone(), r.score.value?)))
            .collect()
    };
    let per_seed: Vec<(BTreeMap<String, f64>, BTreeMap<String, f64>)> = seeds
        .iter()
        .map(|&s| (of(method, s), of(baseline, s)))
        .collect();
    let (args, spread) = arg_over_seeds(&p.test, &per_seed);
    Ok(ArgReport {
        partition: partition_name.to_string(),
        method: method.to_string(),
        baseline: baseline.to_string(),
        tasks: p.test,
        seeds: seeds.into_iter().zip(args).collect(),
        spread,
    })
}
