//! The annotation rows read in short pages: the scope's assignments first (with their number
//! of items), then their rows a page of about [`PAGE_ROWS`] at a time, each page one read.
//!
//! Why: one query over every row kept a read open for as long as its consumer took (a download
//! streams for as long as the client reads). SQLite cannot restart its write-ahead log while a
//! reader uses it, so under a crowd the log grew through a whole export: 549 MB during one
//! bundle of 300k rows under a crowd (measured 2026-11-28), with 120-140 MB of dirty pages
//! waiting for the disk all the while. Now a read lasts one page, and the log is restarted between them
//! ([`crate::checkpoint`]): 37 MB at most through the same bundle.
//!
//! What a reader sees: the assignments of the scope when the reading began, each read whole
//! within one page unless it alone is longer than a page (then in runs of positions).
//!
//! Where: on a heavy thread of the export's kind with a read-only connection of its own
//! ([`rows`]), so that the reading runs at the kind's priority, below the crowd's.

use super::{AnnotationRow, StoredAnnotation, ROW_COLUMNS};
use crate::db::Backend;
use crate::error::Error;
use crate::heavy::Kind;
use crate::study::Study;
use domain::ids::StudyId;
use domain::shots;
use futures_util::stream::{self, BoxStream};
use futures_util::{Stream, StreamExt, TryStreamExt};
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor, FromRow};
use std::collections::HashMap;
use std::sync::LazyLock;
use tokio::sync::mpsc;

/// Rows a page holds, about: whole assignments up to this many rows, or a run of positions of
/// one longer assignment. Pages of 2,048 rows raised a bundle's peak memory by 21-43 MB over one
/// query's (held at once, read on one thread and freed on another); 512 by 10 MB, in the same
/// time (300k rows, 2026-11-28).
pub const PAGE_ROWS: i64 = 512;

/// What the rows are read for: the studies, which of their places count, and each study's
/// training files (a column of every row).
pub struct Scope {
    studies: String,
    with_consent: String,
    synthetic: bool,
    groups: HashMap<StudyId, String>,
}

impl Scope {
    pub fn of(studies: &[Study], synthetic: bool) -> Self {
        let ids: Vec<StudyId> = studies.iter().map(|s| s.id).collect();
        let with_consent: Vec<StudyId> = studies
            .iter()
            .filter(|s| s.config.pages.consent.is_some())
            .map(|s| s.id)
            .collect();
        Scope {
            studies: crate::rows::json_ids(&ids),
            with_consent: crate::rows::json_ids(&with_consent),
            synthetic,
            // The training files cannot change once a worker started: the study's are the
            // worker's.
            groups: studies
                .iter()
                .map(|s| (s.id, shots::files_value(&s.config.scenario_files())))
                .collect(),
        }
    }
}

/// An assignment of the scope: its study, its id and how many items it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Listed {
    pub study: i64,
    pub id: i64,
    pub items: i64,
}

/// One read: assignments of one study (ascending ids), and the positions `from..to` of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub ids: Vec<i64>,
    pub from: i64,
    pub to: i64,
}

/// Cuts the listed assignments (ordered by study and id) into pages of whole assignments of one
/// study, up to `rows` rows each; an assignment of more items than that is read alone, in runs
/// of `rows` positions (its last run open-ended, in case it grew since it was listed).
pub fn pages(listed: &[Listed], rows: i64) -> Vec<Page> {
    let mut pages = Vec::new();
    let mut open: Option<(i64, Page, i64)> = None;
    for a in listed {
        if a.items > rows {
            pages.extend(open.take().map(|(_, p, _)| p));
            let runs = (a.items + rows - 1) / rows;
            for r in 0..runs {
                pages.push(Page {
                    ids: vec![a.id],
                    from: r * rows,
                    to: if r + 1 == runs {
                        i64::MAX
                    } else {
                        (r + 1) * rows
                    },
                });
            }
            continue;
        }
        match &mut open {
            Some((study, page, n)) if *study == a.study && *n + a.items <= rows => {
                page.ids.push(a.id);
                *n += a.items;
            }
            _ => {
                pages.extend(open.take().map(|(_, p, _)| p));
                let page = Page {
                    ids: vec![a.id],
                    from: 0,
                    to: i64::MAX,
                };
                open = Some((a.study, page, a.items));
            }
        }
    }
    pages.extend(open.map(|(_, p, _)| p));
    pages
}

/// The assignments of the scope, ordered by study and id.
async fn listed<'c>(
    db: impl sqlx::Executor<'c, Database = Any>,
    backend: Backend,
    scope: &Scope,
) -> Result<Vec<Listed>, Error> {
    static SQL: LazyLock<[String; 2]> = LazyLock::new(|| {
        [Backend::Sqlite, Backend::Postgres].map(|b| {
            format!(
                "SELECT a.study_id, a.id,
                    (SELECT COUNT(*) FROM assignment_items i WHERE i.assignment_id = a.id)
                 FROM assignments a
                 WHERE a.study_id IN (SELECT CAST(value AS BIGINT) FROM {})
                    AND (a.synthetic = 0 OR $2 = 1)
                    AND (a.consented_at IS NOT NULL
                         OR a.study_id NOT IN (SELECT CAST(value AS BIGINT) FROM {}))
                 ORDER BY a.study_id, a.id",
                b.json_elements("$1"),
                b.json_elements("$3")
            )
        })
    });
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as(&SQL[backend as usize])
        .bind(&scope.studies)
        .bind(i64::from(scope.synthetic))
        .bind(&scope.with_consent)
        .fetch_all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(study, id, items)| Listed { study, id, items })
        .collect())
}

/// The rows of one page, read whole (the read ends before the first row is handed on).
async fn read<'c>(
    db: impl sqlx::Executor<'c, Database = Any>,
    backend: Backend,
    scope: &Scope,
    page: &Page,
) -> Result<Vec<AnnotationRow>, Error> {
    static SQL: LazyLock<[String; 2]> = LazyLock::new(|| {
        [Backend::Sqlite, Backend::Postgres].map(|b| {
            format!(
                "SELECT {ROW_COLUMNS}
                 WHERE a.id IN (SELECT CAST(value AS BIGINT) FROM {})
                    AND i.position >= $2 AND i.position < $3
                 ORDER BY a.id, i.position",
                b.json_elements("$1"),
            )
        })
    });
    let ids = crate::rows::json_ids(&page.ids);
    // A checkpoint that must copy the log whole (SQLite) holds page reads back a moment.
    let reading = crate::checkpoint::page_read().await;
    let rows = sqlx::query(&SQL[backend as usize])
        .bind(ids)
        .bind(page.from)
        .bind(page.to)
        .fetch_all(db)
        .await?;
    drop(reading);
    rows.iter()
        .map(|row| {
            let mut r = StoredAnnotation::from_row(row)?.decode()?;
            r.shot_group = scope.groups.get(&r.study_id).cloned().unwrap_or_default();
            Ok(r)
        })
        .collect()
}

/// The rows of the scope, in pages of about `page_rows` rows ([`PAGE_ROWS`] but in tests), read
/// as heavy work of `kind`: on a thread at the kind's priority, through a read-only connection
/// of its own ([`own_connection`]); through the pool only for an in-memory database.
pub fn rows(
    pool: &AnyPool,
    scope: Scope,
    page_rows: i64,
    kind: Kind,
) -> BoxStream<'static, Result<AnnotationRow, Error>> {
    match own_connection(pool) {
        Some(url) => on_a_thread(url, scope, page_rows, kind),
        None => through_pool(pool.clone(), scope, page_rows),
    }
}

/// Where the rows can be read on a connection of their own: the database's URL, unless it is
/// an in-memory SQLite database (a new connection would open another, empty one). Why: the
/// pool's connections serve the crowd at the crowd's priority. On SQLite each connection's
/// statements run on a thread of that connection; on PostgreSQL the reading is the database's
/// work, but the rows are decoded where they are received. An export read through the pool took
/// the cores from the crowd: the slowest of 32 workers' answers beside every export at once took
/// 568-777 ms, p99 438-514 ms (SQLite, release build, 2026-11-28), against 242-269 ms and
/// 117-133 ms read this way (2026-12-02; `docs/src/under-load.md`). Each reading holds one
/// connection beyond the pool's for as long as it reads (at most one per turn of heavy work).
pub fn own_connection(pool: &AnyPool) -> Option<String> {
    let url = pool.connect_options().database_url.as_str().to_string();
    let memory = url.contains(":memory:") || url.contains("mode=memory");
    (!memory).then_some(url)
}

/// What the reading thread hands on.
enum Read {
    Page(Vec<AnnotationRow>),
    Failed(Error),
    End,
}

/// Pages read ahead of their consumer: one waiting while the next is read.
const PAGES_AHEAD: usize = 1;

/// Reads on a heavy thread of `kind`, which opens the connection (so SQLite's thread for it
/// inherits the thread's priority; PostgreSQL's rows are received and decoded on the thread)
/// and hands each page on over a bounded channel; the thread stops at its next page once the
/// stream is dropped.
fn on_a_thread(
    url: String,
    scope: Scope,
    page_rows: i64,
    kind: Kind,
) -> BoxStream<'static, Result<AnnotationRow, Error>> {
    let (tx, rx) = mpsc::channel(PAGES_AHEAD);
    // A thread that cannot start drops the sender: the stream then ends in an error, below.
    drop(crate::heavy::spawn(kind, move || {
        let read = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::internal)
            .map(|rt| rt.block_on(read_all(&url, &scope, page_rows, &tx)));
        if let Err(e) | Ok(Err(e)) = read {
            let _ = tx.blocking_send(Read::Failed(e));
        }
    }));
    row_by_row(stream::try_unfold(rx, |mut rx| async move {
        match rx.recv().await {
            Some(Read::Page(rows)) => Ok(Some((rows, rx))),
            Some(Read::End) => Ok(None),
            Some(Read::Failed(e)) => Err(e),
            None => Err(Error::internal(
                "the thread reading the rows ended before their end",
            )),
        }
    }))
}

/// Reads every page of the scope on a read-only connection of its own, handing each on.
async fn read_all(
    url: &str,
    scope: &Scope,
    page_rows: i64,
    tx: &mpsc::Sender<Read>,
) -> Result<(), Error> {
    let mut conn = AnyConnection::connect(url).await?;
    let backend = Backend::of_conn(&conn);
    conn.execute(match backend {
        Backend::Sqlite => "PRAGMA query_only = 1; PRAGMA busy_timeout = 10000",
        Backend::Postgres => "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
    })
    .await?;
    let listed = listed(&mut conn, backend, scope).await?;
    for page in pages(&listed, page_rows) {
        let rows = read(&mut conn, backend, scope, &page).await?;
        if tx.send(Read::Page(rows)).await.is_err() {
            // The stream was dropped: nobody reads on.
            return Ok(conn.close().await?);
        }
    }
    conn.close().await?;
    let _ = tx.send(Read::End).await;
    Ok(())
}

/// Where a reading through the pool is: not started, or the pages left.
enum Reading {
    Start(Scope),
    Pages(Scope, std::vec::IntoIter<Page>),
}

/// The rows of the scope read through the pool's connections, a page at a time.
pub fn through_pool(
    pool: AnyPool,
    scope: Scope,
    page_rows: i64,
) -> BoxStream<'static, Result<AnnotationRow, Error>> {
    let backend = Backend::of(&pool);
    row_by_row(stream::try_unfold(
        (pool, Reading::Start(scope)),
        move |(pool, reading)| async move {
            let (scope, mut left) = match reading {
                Reading::Start(scope) => {
                    let listed = listed(&pool, backend, &scope).await?;
                    (scope, pages(&listed, page_rows).into_iter())
                }
                Reading::Pages(scope, left) => (scope, left),
            };
            let Some(page) = left.next() else {
                return Ok::<_, Error>(None);
            };
            let rows = read(&pool, backend, &scope, &page).await?;
            Ok(Some((rows, (pool, Reading::Pages(scope, left)))))
        },
    ))
}

/// The rows of a stream of pages, one by one.
fn row_by_row(
    pages: impl Stream<Item = Result<Vec<AnnotationRow>, Error>> + Send + 'static,
) -> BoxStream<'static, Result<AnnotationRow, Error>> {
    pages
        .map_ok(|rows| stream::iter(rows.into_iter().map(Ok)))
        .try_flatten()
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(study: i64, id: i64, items: i64) -> Listed {
        Listed { study, id, items }
    }

    fn page(ids: &[i64], from: i64, to: i64) -> Page {
        Page {
            ids: ids.to_vec(),
            from,
            to,
        }
    }

    #[test]
    fn whole_assignments_of_one_study_share_a_page_up_to_its_size() {
        let listed = [a(1, 1, 4), a(1, 2, 4), a(1, 5, 3), a(2, 3, 1), a(2, 4, 0)];
        assert_eq!(
            pages(&listed, 8),
            vec![
                page(&[1, 2], 0, i64::MAX),
                page(&[5], 0, i64::MAX),
                page(&[3, 4], 0, i64::MAX),
            ]
        );
        assert_eq!(pages(&[], 8), vec![]);
    }

    #[test]
    fn a_longer_assignment_is_read_alone_in_runs_of_positions() {
        let listed = [a(1, 1, 2), a(1, 2, 17), a(1, 3, 8), a(1, 4, 16)];
        assert_eq!(
            pages(&listed, 8),
            vec![
                page(&[1], 0, i64::MAX),
                page(&[2], 0, 8),
                page(&[2], 8, 16),
                page(&[2], 16, i64::MAX),
                page(&[3], 0, i64::MAX),
                page(&[4], 0, 8),
                page(&[4], 8, i64::MAX),
            ]
        );
    }
}
