//! Giving memory back: large blocks (a password check's 19 MiB, an export's buffers) are
//! mapped on their own, and the heaps are trimmed after large reports and exports.

/// Allocations from this size up get their own mapping.
const MMAP_THRESHOLD: usize = 256 * 1024;

/// Fixes glibc's threshold for separately mapped blocks. By default glibc raises it to the size
/// of each large block freed (up to 32 MiB), after which such blocks come from per-thread heaps
/// that are rarely trimmed: a login flood on the blocking pool then held ~1.9 GB for good.
/// Setting it explicitly turns that adjustment off. Elsewhere (musl, other systems) a no-op.
pub fn return_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called once at start, before threads.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
    }
}

/// The opposite, for training: every block from the heap and freed memory kept for the next
/// step. A training step frees and takes the same large tensors (the 47 MB word embeddings,
/// their gradient and Adam moments); mapping each anew cost a page fault per page, which made
/// fine-tuning 1.7x slower. One heap for all threads: glibc gives each further thread heaps of
/// 64 MiB of its own and unmaps any that falls empty whatever the trim threshold, so the
/// training thread (not the process's first) took the pages of its activations anew each step
/// (44,000 page faults an update at BERT-base shape, 2026-12-02). Called once at start, before
/// threads.
pub fn keep_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called once at start, before threads.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX);
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Hands the free pages of every heap back to the system (glibc `malloc_trim`). Many small
/// blocks (a report's rows) freed together leave holes glibc keeps for later; after a large
/// export the server would otherwise stay at its peak size. A no-op elsewhere.
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it is safe to call at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Trims the heaps every `every` while the server runs (cheap: milliseconds, and only when
/// something was freed).
pub fn trim_periodically(every: std::time::Duration) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let _ = tokio::task::spawn_blocking(trim).await;
        }
    });
}

/// This process's resident memory now and at its peak, in bytes (`VmRSS`, `VmHWM`), where
/// `/proc` tells.
pub fn resident_bytes(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}
