//! Giving memory back: large blocks (a password check's 19 MiB, an export's buffers) are
//! mapped on their own and returned to the system when freed, not kept in the heap.

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
