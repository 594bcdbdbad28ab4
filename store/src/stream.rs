//! Exports written piece by piece, so memory stays bounded whatever their size: where pieces go
//! (a channel into an HTTP body, a spool file with its hash), and the row-by-row files.

use crate::annotations::{annotation_rows, AnnotationRow, ANNOTATION_COLUMNS};
use crate::error::Error;
use crate::heavy::Kind;
use crate::study::Study;
use domain::ids::{AssignmentId, ConfigId, ExampleId, StudyId};
use domain::place::{Phase, PlaceStatus};
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use flate2::Compression;
use futures_util::TryStreamExt;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::AnyPool;
use std::future::Future;
use std::io::{Read, Write};
use tokio::sync::mpsc;

/// Pieces are handed on once they reach this size.
pub const CHUNK: usize = 64 * 1024;

/// Where an export's pieces go.
pub trait Sink: Send {
    fn put(&mut self, piece: Vec<u8>) -> impl Future<Output = Result<(), Error>> + Send;
}

/// Pieces for an HTTP body. The channel is bounded, so a slow client slows the export down
/// instead of letting it pile up; a client that went away stops it.
pub struct Channel(pub mpsc::Sender<Result<Vec<u8>, std::io::Error>>);

impl Sink for Channel {
    async fn put(&mut self, piece: Vec<u8>) -> Result<(), Error> {
        self.0
            .send(Ok(piece))
            .await
            .map_err(|_| Error::Request("the download was cancelled".into()))
    }
}

/// One anonymous temporary file that the members of a bundle are written into one after the
/// other (one file, however many members: a scope with thousands of annotators would run out
/// of file handles with a file each). Each member is its own deflate stream: the row files of a
/// big scope take a tenth of their size on disk while the bundle is built.
pub struct SpoolFile {
    pub file: std::fs::File,
}

impl SpoolFile {
    pub fn new() -> Result<Self, Error> {
        Ok(SpoolFile {
            file: tempfile::tempfile().map_err(Error::internal)?,
        })
    }

    /// A writer for the next member, which starts where the last one ended.
    pub fn member(&mut self) -> Spool<'_> {
        Spool {
            file: DeflateEncoder::new(&mut self.file, Compression::fast()),
            len: 0,
            hasher: Sha256::new(),
        }
    }

    /// Reads back a member spooled at `offset` taking `stored` bytes (its original bytes) from
    /// another handle of the spool file, without moving the position the spooling side writes
    /// at: the archive is written while later members are spooled.
    pub fn read_at(file: &std::fs::File, offset: u64, stored: u64) -> impl Read + '_ {
        DeflateDecoder::new(At {
            file,
            pos: offset,
            end: offset + stored,
        })
    }
}

/// A stretch of a file read with positioned reads (`pread`).
struct At<'a> {
    file: &'a std::fs::File,
    pos: u64,
    end: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let want = buf.len().min((self.end - self.pos) as usize);
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// A member once spooled: its size, its size in the spool and its hex SHA-256.
pub struct Spooled {
    pub len: u64,
    pub stored: u64,
    pub sha256: String,
}

/// A member being spooled, with its size and SHA-256.
pub struct Spool<'a> {
    file: DeflateEncoder<&'a mut std::fs::File>,
    len: u64,
    hasher: Sha256,
}

impl Spool<'_> {
    /// Writes a piece at once (blocking; pieces are at most a chunk).
    pub fn write_piece(&mut self, piece: &[u8]) -> Result<(), Error> {
        self.write_all(piece).map_err(Error::internal)
    }

    /// Ends the member's stream.
    pub fn finish(self) -> Result<Spooled, Error> {
        let Spool {
            mut file,
            len,
            hasher,
        } = self;
        file.try_finish().map_err(Error::internal)?;
        Ok(Spooled {
            len,
            stored: file.total_out(),
            sha256: hex::encode(hasher.finalize()),
        })
    }
}

impl Write for Spool<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(data)?;
        self.hasher.update(&data[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// Pieces waiting for the thread that spools them.
const SPOOL_PIECES: usize = 8;

/// What the spooling thread hands back: the spool file and the member it wrote.
type SpoolEnd = crate::heavy::Handle<Result<(SpoolFile, Spooled), Error>>;

/// A member spooled on a heavy thread (`heavy`), which owns the spool file meanwhile: the rows are
/// read and formatted on the async side and handed over a bounded channel, so deflating and
/// writing them (tens of seconds on 300k rows in a debug build) never holds up an async worker
/// that answers the crowd.
pub struct SpoolTask {
    tx: mpsc::Sender<Vec<u8>>,
    /// Taken when the thread's end is awaited.
    end: Option<SpoolEnd>,
}

impl SpoolTask {
    pub fn start(mut spool: SpoolFile) -> Self {
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(SPOOL_PIECES);
        let end = crate::heavy::spawn(Kind::Bundle, move || {
            let mut member = spool.member();
            while let Some(piece) = rx.blocking_recv() {
                member.write_piece(&piece)?;
            }
            let done = member.finish()?;
            Ok((spool, done))
        });
        SpoolTask { tx, end: Some(end) }
    }

    /// Ends the member; hands the spool file back.
    pub async fn finish(mut self) -> Result<(SpoolFile, Spooled), Error> {
        let end = self.end.take();
        drop(self);
        match end {
            Some(end) => end.await?,
            None => Err(Error::internal("the spool thread has already ended")),
        }
    }
}

impl Sink for SpoolTask {
    async fn put(&mut self, piece: Vec<u8>) -> Result<(), Error> {
        if self.tx.send(piece).await.is_ok() {
            return Ok(());
        }
        // The thread stopped on an error: that error, not the closed channel's.
        match self.end.take() {
            Some(end) => match end.await? {
                Err(e) => Err(e),
                Ok(_) => Err(Error::internal("the spool thread ended early")),
            },
            None => Err(Error::internal("the spool thread has already ended")),
        }
    }
}

/// Gathers text into pieces of about `CHUNK` bytes for a sink.
pub struct Out<S: Sink> {
    buf: Vec<u8>,
    pub sink: S,
}

impl<S: Sink> Out<S> {
    pub fn new(sink: S) -> Self {
        Out {
            buf: Vec::with_capacity(CHUNK),
            sink,
        }
    }

    pub async fn write(&mut self, text: &str) -> Result<(), Error> {
        self.buf.extend_from_slice(text.as_bytes());
        if self.buf.len() >= CHUNK {
            let piece = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
            self.sink.put(piece).await?;
        }
        Ok(())
    }

    /// Hands on what is left; returns the sink.
    pub async fn finish(mut self) -> Result<S, Error> {
        if !self.buf.is_empty() {
            let piece = std::mem::take(&mut self.buf);
            self.sink.put(piece).await?;
        }
        Ok(self.sink)
    }
}

/// The row-by-row files of a scope of studies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowFile {
    AnnotationsJsonl,
    AnnotationsCsv,
    /// The bundle's `assignments.jsonl`: per assignment, the items in the order shown.
    Assignments,
}

/// Writes one of the row files, the rows read from the database a page at a time as heavy work
/// of `kind` (a download's or a bundle's).
pub async fn write_rows<S: Sink>(
    pool: &AnyPool,
    studies: &[Study],
    synthetic: bool,
    file: RowFile,
    kind: Kind,
    out: &mut Out<S>,
) -> Result<(), Error> {
    let mut rows = annotation_rows(pool, studies, synthetic, kind);
    if file == RowFile::AnnotationsCsv {
        out.write(&domain::report::draw::table::csv_line(&ANNOTATION_COLUMNS))
            .await?;
    }
    let mut assignment: Option<AssignmentExport> = None;
    while let Some(r) = rows.try_next().await? {
        match file {
            RowFile::AnnotationsJsonl => out.write(&super::export::json_line(&r)?).await?,
            RowFile::AnnotationsCsv => {
                out.write(&super::export::csv_row(&ANNOTATION_COLUMNS, &r)?)
                    .await?
            }
            RowFile::Assignments => {
                let a = match assignment.take() {
                    Some(a) if a.assignment_id == r.assignment_id => a,
                    before => {
                        if let Some(done) = before {
                            out.write(&super::export::json_line(&done)?).await?;
                        }
                        AssignmentExport::of(&r)
                    }
                };
                let a = assignment.insert(a);
                a.items.push((r.position, r.phase, r.example_id, r.item_id));
            }
        }
    }
    if let Some(done) = assignment {
        out.write(&super::export::json_line(&done)?).await?;
    }
    Ok(())
}

/// Per assignment: which examples the worker saw and in what order.
#[derive(Serialize)]
struct AssignmentExport {
    assignment_id: AssignmentId,
    study_id: StudyId,
    worker: String,
    k: u32,
    training_split: Option<u32>,
    config_id: ConfigId,
    status: PlaceStatus,
    started_at: i64,
    finished_at: Option<i64>,
    /// Every assignment or session id the worker's links presented, with what became of it.
    presented: Vec<domain::platform::Presented>,
    items: Vec<(i64, Phase, ExampleId, String)>,
}

impl AssignmentExport {
    fn of(r: &AnnotationRow) -> Self {
        AssignmentExport {
            assignment_id: r.assignment_id,
            study_id: r.study_id,
            worker: r.worker.clone(),
            k: r.k,
            training_split: r.training_split,
            config_id: r.config_id,
            status: r.status,
            started_at: r.started_at,
            finished_at: r.finished_at,
            presented: r.presented.clone(),
            items: Vec::new(),
        }
    }
}

/// A blocking writer into the channel of an HTTP body (the tar of a bundle is written on a
/// blocking thread), in pieces of about `CHUNK` bytes.
pub struct ChannelWriter {
    tx: mpsc::Sender<Result<Vec<u8>, std::io::Error>>,
    buf: Vec<u8>,
}

impl ChannelWriter {
    pub fn new(tx: mpsc::Sender<Result<Vec<u8>, std::io::Error>>) -> Self {
        ChannelWriter {
            tx,
            buf: Vec::with_capacity(CHUNK),
        }
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let piece = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        self.tx
            .blocking_send(Ok(piece))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "client went away"))
    }
}
