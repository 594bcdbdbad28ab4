//! Ports for the daemons the tests start as processes of their own (llama.cpp's server,
//! Slurm's), and starting again where one was taken before its daemon bound it.

use std::net::TcpListener;

/// `N` distinct ports nobody listens on now: all are held until all are chosen, so the kernel
/// cannot hand out the same one twice.
pub fn free_ports<const N: usize>() -> [u16; N] {
    let held: [TcpListener; N] = std::array::from_fn(|_| TcpListener::bind("127.0.0.1:0").unwrap());
    held.map(|l| l.local_addr().unwrap().port())
}

/// One port nobody listens on now.
pub fn free_port() -> u16 {
    let [port] = free_ports();
    port
}

/// What `start` starts on ports it chooses: a port free when chosen can be taken before the
/// daemon binds it (CI's Slurm test failed so), so where `start` answers that it was (`None`,
/// having stopped what it started), it runs again on new ports, up to three times.
pub fn starting_again_where_taken<T>(what: &str, mut start: impl FnMut() -> Option<T>) -> T {
    for attempt in 1..=3 {
        if let Some(started) = start() {
            return started;
        }
        eprintln!("{what}: a port was taken (attempt {attempt}); starting again on new ports");
    }
    panic!("{what}: its ports were taken three times running");
}
