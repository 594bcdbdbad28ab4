//! Checkpoints of a served SQLite database on a connection of their own, so that no answer's
//! commit copies the write-ahead log into the database file while a crowd waits for it.
//!
//! Why: with SQLite's automatic checkpoints the commit that follows a long read (an export
//! streams rows for minutes, and the log cannot be copied past a reader's snapshot meanwhile)
//! checkpoints everything written in the meantime before it returns: hundreds of MB under a
//! crowd, a stall measured at 4.6 s on a CI disk. Here the pool's connections never checkpoint
//! (`wal_autocheckpoint = 0`, see [`super::db::Open`]); every second this task checkpoints
//! PASSIVE (it never blocks a writer), and once the whole log is copied and it has grown past
//! [`RESTART_FRAMES`] it restarts the log (RESTART, waiting at most 50 ms for writers and
//! readers), so the log stays bounded under steady writes. Readers that overlap (exports and
//! report builds reading pages of rows one after another) can keep a snapshot on the log at
//! every moment, so that no round ever copies it whole: past [`HOLD_FRAMES`] the checkpointer
//! holds the page reads back ([`page_read`]) for one copy, and the log is copied and restarted.
//! PostgreSQL: nothing.

use sqlx::{AnyConnection, Connection, Executor};
use std::time::Duration;

/// A log of more frames than this (4 KiB pages: 16 MiB) is restarted once wholly copied.
pub const RESTART_FRAMES: i64 = 4096;
/// A log of more frames than this (64 MiB) that readers keep from being copied whole is copied
/// with the page reads held back: the log's bound, with what is written in the round after.
pub const HOLD_FRAMES: i64 = 4 * RESTART_FRAMES;

/// Page reads of rows in flight (shared); the checkpointer takes it alone to hold them back.
static PAGE_READS: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// Held while a page of rows is read (`annotations::pages`): a checkpoint that must copy the
/// log whole waits for the pages being read, and the next ones wait for it (one copy of at
/// most [`HOLD_FRAMES`] frames: well under a second). Fair: once the checkpointer waits, new
/// reads queue behind it.
pub async fn page_read() -> tokio::sync::RwLockReadGuard<'static, ()> {
    PAGE_READS.read().await
}

/// How long a restart may hold new writers back: the busy wait of its connection (50 ms).
const RESTART_WAIT: &str = "PRAGMA busy_timeout = 50";
const PASSIVE: &str = "PRAGMA wal_checkpoint(PASSIVE)";
const RESTART: &str = "PRAGMA wal_checkpoint(RESTART)";
const EVERY: Duration = Duration::from_secs(1);

/// Starts the checkpoints of the SQLite file at `url` (nothing for PostgreSQL or in memory).
pub fn spawn(url: &str) {
    if !url.starts_with("sqlite:") || url.contains(":memory:") {
        return;
    }
    let url = url.to_string();
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(EVERY);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut checkpointer = None;
        loop {
            ticks.tick().await;
            if checkpointer.is_none() {
                match Checkpointer::connect(&url).await {
                    Ok(c) => checkpointer = Some(c),
                    Err(e) => {
                        tracing::warn!("checkpoints: cannot connect: {e}");
                        continue;
                    }
                }
            }
            if let Some(c) = checkpointer.as_mut() {
                if let Err(e) = c.step().await {
                    // A new connection on the next tick.
                    tracing::warn!("checkpoints: {e}");
                    checkpointer = None;
                }
            }
        }
    });
}

/// What a checkpoint answered: SQLite's `(busy, log frames, frames copied)`.
type Outcome = (i64, i64, i64);

/// One connection and the log it last failed to restart (not tried again until it changes).
pub struct Checkpointer {
    conn: AnyConnection,
    failed_restart: Option<i64>,
    /// [`HOLD_FRAMES`], but in tests.
    hold_frames: i64,
}

impl Checkpointer {
    pub async fn connect(url: &str) -> Result<Self, sqlx::Error> {
        let mut conn = AnyConnection::connect(url).await?;
        conn.execute(RESTART_WAIT).await?;
        Ok(Checkpointer {
            conn,
            failed_restart: None,
            hold_frames: HOLD_FRAMES,
        })
    }

    /// The same, holding page reads back past `frames` instead of [`HOLD_FRAMES`] (for tests
    /// that need not write 64 MiB).
    pub fn holding_past(self, frames: i64) -> Self {
        Checkpointer {
            hold_frames: frames,
            ..self
        }
    }

    /// One round: PASSIVE, then RESTART where the log is wholly copied and long; where it is
    /// not copied whole and past [`HOLD_FRAMES`], the same with the page reads held back.
    /// Answers whether the log was restarted.
    pub async fn step(&mut self) -> Result<bool, sqlx::Error> {
        let (busy, frames, copied) = self.checkpoint(PASSIVE).await?;
        if (busy != 0 || frames != copied) && frames > self.hold_frames {
            // A PASSIVE copy (which never blocks a writer) with the page reads held back.
            let _held = PAGE_READS.write().await;
            let outcome = self.checkpoint(PASSIVE).await?;
            return self.restart_where_copied(outcome).await;
        }
        self.restart_where_copied((busy, frames, copied)).await
    }

    async fn restart_where_copied(
        &mut self,
        (busy, frames, copied): Outcome,
    ) -> Result<bool, sqlx::Error> {
        let whole = busy == 0 && frames == copied;
        if !whole || frames <= RESTART_FRAMES || self.failed_restart == Some(frames) {
            return Ok(false);
        }
        // Busy: a reader still uses the log (a long export); tried again once it has grown.
        let restarted = self.checkpoint(RESTART).await?.0 == 0;
        self.failed_restart = (!restarted).then_some(frames);
        Ok(restarted)
    }

    async fn checkpoint(&mut self, statement: &'static str) -> Result<Outcome, sqlx::Error> {
        sqlx::query_as(statement).fetch_one(&mut self.conn).await
    }
}
