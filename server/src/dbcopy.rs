//! `db copy`, `db backup` and `db query`: a study database moved between SQLite and PostgreSQL
//! without loss (every table, row counts and content hashes compared), a consistent copy of a
//! live one, and SQL run on either backend with the rows printed as JSON.

use futures_util::TryStreamExt;
use sha2::{Digest, Sha256};
use sqlx::any::{AnyRow, AnyTypeInfoKind};
use sqlx::{AnyPool, Column, Row, ValueRef};
use std::path::Path;
use store::db::{Backend, TABLES};
use store::error::{Error, Result};

/// One table's outcome: rows in source and destination, and whether their contents agree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableCopy {
    pub table: &'static str,
    pub rows: u64,
    pub copied_rows: u64,
    pub hash: String,
    pub copied_hash: String,
}

impl TableCopy {
    pub fn agrees(&self) -> bool {
        self.rows == self.copied_rows && self.hash == self.copied_hash
    }
}

/// A value as both engines store it: the three column kinds of the schema, or NULL of one.
#[derive(Debug, Clone)]
enum Cell {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
}

impl Cell {
    /// The column's kind from its declared type, the value read as that kind. A REAL column may
    /// hold a whole number in SQLite; it is read back as a real.
    fn read(row: &AnyRow, i: usize) -> Result<Cell> {
        let declared = row.columns()[i].type_info().kind();
        let raw = row.try_get_raw(i)?;
        let value_kind = (!raw.is_null()).then(|| raw.type_info().kind());
        let kind = match declared {
            AnyTypeInfoKind::Null => value_kind.unwrap_or(AnyTypeInfoKind::Text),
            k => k,
        };
        Ok(match kind {
            AnyTypeInfoKind::SmallInt | AnyTypeInfoKind::Integer | AnyTypeInfoKind::BigInt => {
                Cell::Int(row.try_get(i)?)
            }
            AnyTypeInfoKind::Real | AnyTypeInfoKind::Double => match value_kind {
                Some(AnyTypeInfoKind::BigInt) => {
                    Cell::Real(row.try_get::<Option<i64>, _>(i)?.map(|v| v as f64))
                }
                _ => Cell::Real(row.try_get(i)?),
            },
            AnyTypeInfoKind::Text => Cell::Text(row.try_get(i)?),
            other => {
                return Err(Error::Invalid(format!(
                    "column {} holds a value of type {other:?}, which the schema never uses",
                    row.columns()[i].name()
                )))
            }
        })
    }

    /// Feeds an exact, kind-tagged form of the value to `h` (reals by their bits).
    fn digest(&self, h: &mut Sha256) {
        match self {
            Cell::Int(Some(v)) => h.update(format!("i{v};")),
            Cell::Real(Some(v)) => h.update(format!("r{:016x};", v.to_bits())),
            Cell::Text(Some(v)) => h.update(format!("t{}:{v};", v.len())),
            Cell::Int(None) | Cell::Real(None) | Cell::Text(None) => h.update("n;"),
        }
    }
}

/// The content hash of a table from its per-row digests, independent of row order (text keys
/// sort differently in the two engines): the SHA-256 of the sorted digests.
fn combined(mut digests: Vec<[u8; 32]>) -> String {
    digests.sort_unstable();
    let mut h = Sha256::new();
    for d in &digests {
        h.update(d);
    }
    hex::encode(h.finalize())
}

fn row_digest(cells: &[Cell]) -> [u8; 32] {
    let mut h = Sha256::new();
    for c in cells {
        c.digest(&mut h);
    }
    h.finalize().into()
}

fn read_row(row: &AnyRow) -> Result<Vec<Cell>> {
    (0..row.columns().len())
        .map(|i| Cell::read(row, i))
        .collect()
}

/// Rows and content hash of `table` as `pool` holds it now.
async fn table_hash(pool: &AnyPool, table: &str) -> Result<(u64, String)> {
    let mut digests = Vec::new();
    let sql = format!("SELECT * FROM {table}");
    let mut rows = sqlx::query(&sql).fetch(pool);
    while let Some(row) = rows.try_next().await? {
        digests.push(row_digest(&read_row(&row)?));
    }
    Ok((digests.len() as u64, combined(digests)))
}

/// Bind parameters per INSERT (under both engines' limits).
const PARAMS_PER_INSERT: usize = 900;

/// Copies every table of `from` into `to`, which must have the same schema and no rows: the
/// source is read in one snapshot, the destination written in one transaction. Then each
/// table's rows and content hash as read are compared with what the destination holds. Refuses
/// a destination that holds data, and reports (does not hide) any table that disagrees.
pub async fn copy(from: &AnyPool, to: &AnyPool) -> Result<Vec<TableCopy>> {
    for (table, _) in TABLES {
        let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
            .fetch_one(to)
            .await?;
        if n > 0 {
            return Err(Error::Refused(format!(
                "the destination already holds data ({table} has {n} row{}); copy into a new, empty database",
                if n == 1 { "" } else { "s" }
            )));
        }
    }
    let mut source = from.begin().await?;
    if Backend::of(from) == Backend::Postgres {
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            .execute(&mut *source)
            .await?;
    }
    let mut tx = store::tx::begin_immediate(to, &[]).await?;
    let mut read = Vec::new();
    for (table, _) in TABLES {
        let mut digests = Vec::new();
        let mut batch: Vec<Vec<Cell>> = Vec::new();
        let mut columns: Vec<String> = Vec::new();
        let sql = format!("SELECT * FROM {table}");
        {
            let mut rows = sqlx::query(&sql).fetch(&mut *source);
            while let Some(row) = rows.try_next().await? {
                if columns.is_empty() {
                    columns = row.columns().iter().map(|c| c.name().to_string()).collect();
                }
                let cells = read_row(&row)?;
                digests.push(row_digest(&cells));
                batch.push(cells);
                if (batch.len() + 1) * columns.len() > PARAMS_PER_INSERT {
                    insert(&mut tx, table, &columns, std::mem::take(&mut batch)).await?;
                }
            }
        }
        if !batch.is_empty() {
            insert(&mut tx, table, &columns, batch).await?;
        }
        read.push((*table, digests.len() as u64, combined(digests)));
    }
    source.rollback().await?;
    if Backend::of(to) == Backend::Postgres {
        // Identity columns go on after the highest copied id.
        for (table, identity) in TABLES {
            if *identity {
                sqlx::query(&format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM {table}"
                ))
                .execute(&mut *tx)
                .await?;
            }
        }
    }
    tx.commit().await?;
    let mut report = Vec::new();
    for (table, rows, hash) in read {
        let (copied_rows, copied_hash) = table_hash(to, table).await?;
        report.push(TableCopy {
            table,
            rows,
            copied_rows,
            hash,
            copied_hash,
        });
    }
    Ok(report)
}

async fn insert(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    table: &str,
    columns: &[String],
    rows: Vec<Vec<Cell>>,
) -> Result<()> {
    let width = columns.len();
    let values = (0..rows.len())
        .map(|r| {
            let params = (1..=width)
                .map(|c| format!("${}", r * width + c))
                .collect::<Vec<_>>();
            format!("({})", params.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "INSERT INTO {table} ({}) VALUES {values}",
        columns.join(", ")
    );
    let mut q = sqlx::query(&sql);
    for cell in rows.into_iter().flatten() {
        q = match cell {
            Cell::Int(v) => q.bind(v),
            Cell::Real(v) => q.bind(v),
            Cell::Text(v) => q.bind(v),
        };
    }
    q.execute(&mut **tx).await?;
    Ok(())
}

/// A consistent copy of a live SQLite database in one new file (`VACUUM INTO`), which is
/// refused if it exists. PostgreSQL is backed up with its own tools (the message says how).
pub async fn backup(pool: &AnyPool, url: &str, out: &Path) -> Result<()> {
    if Backend::of(pool) == Backend::Postgres {
        return Err(Error::Invalid(format!(
            "a PostgreSQL database is backed up with its server's tools: \
             pg_dump --format=custom --file={} '{url}' (restore with pg_restore), or copied to a \
             SQLite file with: clues-lab db copy --from '{url}' --to sqlite://{}",
            out.display(),
            out.with_extension("db").display()
        )));
    }
    if out.exists() {
        return Err(Error::Invalid(format!(
            "{} already exists; name a new file for the backup",
            out.display()
        )));
    }
    let target = out
        .to_str()
        .ok_or_else(|| Error::Invalid(format!("{} is not a UTF-8 path", out.display())))?;
    sqlx::query("VACUUM INTO $1")
        .bind(target)
        .execute(pool)
        .await?;
    Ok(())
}

/// Runs one SQL statement with `params` (JSON numbers and strings, null) bound as `$1`, `$2`,
/// …, and returns its rows as JSON arrays (integers, reals, strings, null).
pub async fn query(
    pool: &AnyPool,
    sql: &str,
    params: &[serde_json::Value],
) -> Result<serde_json::Value> {
    use serde_json::Value;
    let mut q = sqlx::query(sql);
    for (i, p) in params.iter().enumerate() {
        q = match p {
            Value::Null => q.bind(None::<String>),
            Value::Number(n) => match n.as_i64() {
                Some(v) => q.bind(v),
                None => q.bind(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => q.bind(s.clone()),
            Value::Bool(b) => q.bind(i64::from(*b)),
            other => {
                return Err(Error::Invalid(format!(
                    "parameter ${}: {other} is not a number, a string or null",
                    i + 1
                )))
            }
        };
    }
    let rows = q.fetch_all(pool).await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let cells = read_row(row)?
            .into_iter()
            .map(|c| match c {
                Cell::Int(v) => v.map_or(Value::Null, Value::from),
                Cell::Real(v) => v.map_or(Value::Null, Value::from),
                Cell::Text(v) => v.map_or(Value::Null, Value::from),
            })
            .collect();
        out.push(Value::Array(cells));
    }
    Ok(Value::Array(out))
}
