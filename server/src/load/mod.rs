//! `clues-lab load`: load runs against a running server that print submits/s, latency
//! percentiles and the server's resident memory (crowd load, a login flood, an export soak),
//! and the authenticity sessions; `load fill`'s synthetic rows are `store::study::fill`.

pub mod authenticity;
pub mod client;
pub mod crowd;

use client::{ms_since, percentile, rss, Client, RssSampler};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MB: f64 = 1024.0 * 1024.0;

/// Where the server is and what to measure it with.
#[derive(Debug, Clone, clap::Args)]
pub struct Target {
    /// The server's base URL (crowd load: several servers of one deployment, comma-separated).
    #[arg(long, default_value = "http://127.0.0.1:3000")]
    pub url: String,
    /// The server's process id, for its resident memory (`/proc/<pid>/status`).
    #[arg(long)]
    pub pid: Option<u32>,
    /// An open study with room for many workers (a label task answers labels).
    #[arg(long)]
    pub study: i64,
    /// Crowd workers at once.
    #[arg(long, default_value_t = 40)]
    pub workers: usize,
    /// Seconds of each measured phase.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Each crowd worker leaves after this many answers and a new one arrives (0: a worker
    /// answers until its place is done), to measure arrivals under load.
    #[arg(long, default_value_t = 0)]
    pub answers_per_worker: usize,
    /// Each crowd worker waits this long after each answer, as a person reads the next item
    /// (0: at once, a crowd that takes every cycle it is given).
    #[arg(long, default_value_t = 0)]
    pub pause_ms: u64,
}

impl Target {
    fn mb(&self) -> f64 {
        self.pid.map_or(f64::NAN, |p| rss(p) as f64 / MB)
    }

    fn sampler(&self) -> Option<RssSampler> {
        self.pid.map(RssSampler::start)
    }
}

fn peak_mb(s: &Option<RssSampler>) -> f64 {
    s.as_ref().map_or(f64::NAN, |s| s.peak() as f64 / MB)
}

/// Crowd load for `seconds`, alongside whatever `during` does (given the end of the phase);
/// returns the crowd's numbers.
fn crowd_while<T>(
    t: &Target,
    tag: &str,
    during: impl FnOnce(Instant) -> T,
) -> (crowd::CrowdStats, f64, T) {
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let answers = (t.answers_per_worker > 0).then_some(t.answers_per_worker);
    let workers = crowd::run_paced(
        &t.url,
        t.study,
        t.workers,
        tag,
        stop.clone(),
        answers,
        Duration::from_millis(t.pause_ms),
    );
    let out = during(started + Duration::from_secs(t.seconds));
    std::thread::sleep(Duration::from_secs(t.seconds).saturating_sub(started.elapsed()));
    stop.store(true, Ordering::Relaxed);
    let stats = workers
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    (stats, started.elapsed().as_secs_f64(), out)
}

fn print_crowd(label: &str, s: &crowd::CrowdStats, secs: f64) {
    let (rate, p50, p99) = s.summary(secs);
    let (a50, a99) = s.arrivals();
    println!(
        "{label}: {rate:.1} submits/s, p50 {p50:.1} ms, p99 {p99:.1} ms, slowest {:.1} ms ({} submits, {} errors); \
         arrivals (join + first item): p50 {a50:.1} ms, p99 {a99:.1} ms ({} arrivals)",
        s.slowest_ms(),
        s.latencies_ms.len(),
        s.errors.len(),
        s.arrivals_ms.len()
    );
    if let Some(e) = s.errors.first() {
        println!("  first error: {e}");
    }
}

/// Crowd load alone.
pub fn crowd_load(t: &Target) {
    let idle = t.mb();
    let rss = t.sampler();
    let (s, secs, ()) = crowd_while(t, &format!("crowd{}", std::process::id()), |_| ());
    print_crowd(&format!("crowd load, {} workers", t.workers), &s, secs);
    println!(
        "server RSS: {idle:.1} MB idle, peak {:.1} MB",
        peak_mb(&rss)
    );
}

/// Crowd load alone, then under a flood of `logins` concurrent wrong-password sign-ins from
/// as many addresses (the server must trust `X-Forwarded-For`: `serve --trust-proxy`).
pub fn login_flood(t: &Target, logins: usize) {
    let tag = format!("flood{}", std::process::id());
    let (base, secs, ()) = crowd_while(t, &format!("{tag}-a"), |_| ());
    print_crowd("crowd load without the flood", &base, secs);
    let idle = t.mb();
    let rss = t.sampler();
    let (during, secs, statuses) = crowd_while(t, &format!("{tag}-b"), |until| {
        flood(&t.url, logins, &tag, until)
    });
    print_crowd(
        &format!("crowd load during {logins} concurrent logins (each repeated at once)"),
        &during,
        secs,
    );
    let mut counts: Vec<(u16, usize)> = Vec::new();
    for s in statuses {
        match counts.iter_mut().find(|(c, _)| *c == s) {
            Some((_, n)) => *n += 1,
            None => counts.push((s, 1)),
        }
    }
    counts.sort();
    println!("login answers (status x count): {counts:?}");
    std::thread::sleep(Duration::from_secs(2));
    println!(
        "server RSS: {idle:.1} MB before, peak {:.1} MB, {:.1} MB 2 s after",
        peak_mb(&rss),
        t.mb()
    );
}

/// `logins` threads signing in with wrong passwords, each from its own address, until `until`.
fn flood(base: &str, logins: usize, tag: &str, until: Instant) -> Vec<u16> {
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..logins)
            .map(|i| {
                let c = Client::new(base);
                scope.spawn(move || {
                    let mut out = Vec::new();
                    let addr = format!("10.{}.{}.{}", i / 65536 % 256, i / 256 % 256, i % 256);
                    let mut n = 0;
                    while Instant::now() < until {
                        let body = format!("name={tag}-{i}-{n}&password=wrong-password");
                        n += 1;
                        let r = c.post(
                            "/api/login",
                            "application/x-www-form-urlencoded",
                            &body,
                            &[("x-forwarded-for", &addr)],
                        );
                        out.push(r.map_or(0, |r| r.status));
                    }
                    out
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| {
                t.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// Each export once (peak memory each), then crowd load while two dashboards and a bundle are
/// built, then `soak` seconds of back-to-back exports (memory at start and end).
pub fn export_soak(t: &Target, cookie: &str, soak: u64) {
    let c = Client::new(&t.url);
    println!("server RSS idle: {:.1} MB", t.mb());
    use domain::export_file::ExportFile::*;
    for file in [
        AnnotationsCsv,
        AnnotationsJsonl,
        BundleTar,
        ScoresJson,
        PayCsv,
    ]
    .map(|f| f.as_str())
    {
        let rss = t.sampler();
        let started = Instant::now();
        let (status, bytes) = c
            .download(&format!("/export/{file}?synthetic=1"), cookie)
            .unwrap_or((0, 0));
        println!(
            "{file}: {status}, {:.1} MB in {:.1} s, server peak RSS {:.1} MB",
            bytes as f64 / MB,
            started.elapsed().as_secs_f64(),
            peak_mb(&rss)
        );
    }
    let (s, secs, ()) = crowd_while(t, &format!("soak{}", std::process::id()), |_| {
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    Client::new(&t.url).form("dashboard", "studies=&synthetic=true", cookie)
                });
            }
            scope.spawn(|| Client::new(&t.url).download("/export/bundle.tar?synthetic=1", cookie));
        });
    });
    print_crowd(
        "crowd load while two dashboards and a bundle were built",
        &s,
        secs,
    );
    let start = t.mb();
    let rss = t.sampler();
    let until = Instant::now() + Duration::from_secs(soak);
    let mut times = Vec::new();
    let mut n = 0;
    while Instant::now() < until {
        let file = [AnnotationsCsv, BundleTar, AnnotationsJsonl][n % 3].as_str();
        n += 1;
        let t0 = Instant::now();
        let _ = c.download(&format!("/export/{file}?synthetic=1"), cookie);
        times.push(ms_since(t0));
    }
    times.sort_by(f64::total_cmp);
    let end = t.mb();
    // The server trims its heaps every 5 s.
    std::thread::sleep(Duration::from_secs(6));
    println!(
        "export soak: {n} exports in {soak} s (p50 {:.0} ms); server RSS {start:.1} MB at start, peak {:.1} MB, {end:.1} MB at the end, {:.1} MB 6 s later",
        percentile(&times, 50.0),
        peak_mb(&rss),
        t.mb()
    );
}

/// The crowd alone for `seconds`, then the same crowd beside every export of the scope started
/// together (each format twice, the majority predictions, two dashboards): the slowest answer
/// and p99 of each with their ratio, and each export's first byte and end.
pub fn crowd_first(t: &Target, cookie: &str) {
    let tag = format!("first{}", std::process::id());
    let (alone, alone_secs, ()) = crowd_while(t, &format!("{tag}a"), |_| ());
    let idle = t.mb();
    let rss = t.sampler();
    let (beside, beside_secs, (exports, live)) = crowd_while(t, &format!("{tag}b"), |_| {
        let exports = every_export_at_once(&t.url, cookie);
        // The study changes with every answer: the page drawn from the last build, at once.
        (exports, dashboard_times(&t.url, cookie, 3))
    });
    print_crowd(
        &format!("crowd alone, {} workers", t.workers),
        &alone,
        alone_secs,
    );
    print_crowd(
        "the same crowd beside every export at once",
        &beside,
        beside_secs,
    );
    let (_, _, p99_alone) = alone.summary(alone_secs);
    let (_, _, p99_beside) = beside.summary(beside_secs);
    println!(
        "slowest answer {:.0} ms alone, {:.0} ms beside the exports ({:.2}x); p99 {p99_alone:.0} ms, {p99_beside:.0} ms ({:.2}x)",
        alone.slowest_ms(),
        beside.slowest_ms(),
        beside.slowest_ms() / alone.slowest_ms(),
        p99_beside / p99_alone,
    );
    for (path, d) in exports {
        match d {
            Ok(d) => println!(
                "  {path}: {}, {:.1} MB, first byte {:.0} ms, whole {:.0} ms",
                d.status,
                d.bytes as f64 / MB,
                d.first_byte_ms,
                d.total_ms
            ),
            Err(e) => println!("  {path}: failed: {e}"),
        }
    }
    println!(
        "server RSS {idle:.1} MB before the exports, peak {:.1} MB",
        peak_mb(&rss)
    );
    let quiet = dashboard_times(&t.url, cookie, 3);
    println!("dashboard of every study, the crowd answering: {live:.0?} ms; the crowd gone: {quiet:.0?} ms");
}

/// Study `watched`'s pay sheet and dashboard asked for every second for the run's seconds, on
/// a quiet server and then while the crowd answers its own study: their times (median and
/// slowest) and the ratios. With a version per study, the crowd's answers leave the watched
/// study's kept report as it was (issue 76).
pub fn other_study(t: &Target, cookie: &str, watched: i64) {
    let c = Client::new(&t.url);
    let pay = format!("/export/pay.csv?studies={watched}&synthetic=1");
    let board = format!("studies={watched}&synthetic=true");
    let ask = |until: Instant| {
        let (mut pays, mut boards) = (Vec::new(), Vec::new());
        while Instant::now() < until {
            let t0 = Instant::now();
            let _ = c.download(&pay, cookie);
            pays.push(ms_since(t0));
            let t0 = Instant::now();
            let _ = c.form("dashboard", &board, cookie);
            boards.push(ms_since(t0));
            std::thread::sleep(Duration::from_secs(1).saturating_sub(t0.elapsed()));
        }
        (pays, boards)
    };
    // The first ask builds the watched study's report; the times are of what follows.
    let _ = ask(Instant::now() + Duration::from_millis(1));
    let (pays_quiet, boards_quiet) = ask(Instant::now() + Duration::from_secs(t.seconds));
    let tag = format!("other{}", std::process::id());
    let (crowd, secs, (pays, boards)) = crowd_while(t, &tag, ask);
    print_crowd(
        &format!("crowd of {} workers on study {}", t.workers, t.study),
        &crowd,
        secs,
    );
    for (what, quiet, busy) in [
        ("pay.csv", pays_quiet, pays),
        ("dashboard", boards_quiet, boards),
    ] {
        let sorted = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v
        };
        let (quiet, busy) = (sorted(quiet), sorted(busy));
        let (q, b) = (percentile(&quiet, 50.0), percentile(&busy, 50.0));
        println!(
            "study {watched}'s {what}: median {q:.1} ms quiet, {b:.1} ms beside the crowd ({:.2}x); slowest {:.1} ms, {:.1} ms ({} and {} asks)",
            b / q,
            percentile(&quiet, 100.0),
            percentile(&busy, 100.0),
            quiet.len(),
            busy.len(),
        );
    }
}

/// The dashboard of every study `n` times one after the other: each answer's time (ms).
fn dashboard_times(url: &str, cookie: &str, n: usize) -> Vec<f64> {
    let c = Client::new(url);
    (0..n)
        .map(|_| {
            let t0 = Instant::now();
            let _ = c.form("dashboard", "studies=&synthetic=true", cookie);
            ms_since(t0)
        })
        .collect()
}

/// Every export of every study (synthetic workers counted) at once, and two dashboards.
fn every_export_at_once(
    url: &str,
    cookie: &str,
) -> Vec<(String, Result<client::Download, String>)> {
    use domain::export_file::ExportFile::*;
    let formats = [
        AnnotationsCsv,
        AnnotationsJsonl,
        BundleTar,
        ScoresJson,
        ScoresCsv,
        ScoresMd,
        PayCsv,
    ]
    .map(|f| format!("/export/{}?synthetic=1", f.as_str()));
    let mut paths: Vec<String> = formats.iter().chain(formats.iter()).cloned().collect();
    paths.push(format!(
        "/export/{}?synthetic=1&task=SST-2&k=0",
        PredictionsJsonl.as_str()
    ));
    std::thread::scope(|scope| {
        let dashboards: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    let t0 = Instant::now();
                    let r = Client::new(url).form("dashboard", "studies=&synthetic=true", cookie);
                    let ms = ms_since(t0);
                    r.map(|r| client::Download {
                        status: r.status,
                        bytes: r.body.len() as u64,
                        first_byte_ms: ms,
                        total_ms: ms,
                    })
                })
            })
            .collect();
        let files: Vec<_> = paths
            .iter()
            .map(|p| scope.spawn(move || (p.clone(), Client::new(url).download_timed(p, cookie))))
            .collect();
        let mut out: Vec<_> = files
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        for d in dashboards {
            let d = d.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            out.push(("dashboard".to_string(), d));
        }
        out
    })
}
