//! The `clues-lab` binary as a real server process on a free port, for tests that need a
//! socket, its memory or a crash: started, read for its address, killed.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub struct Spawned {
    pub child: Child,
    pub base: String,
}

impl Spawned {
    /// `clues-lab --database <db_url(db)> serve --addr 127.0.0.1:0 <extra>`; waits for the
    /// "listening on" line.
    pub fn start(db: &Path, extra: &[&str]) -> Spawned {
        Self::start_with(db, extra, None)
    }

    /// As `start`, with the open-descriptor limit (soft and hard) set to `open_files`, as
    /// `ulimit -n` would before the server starts.
    pub fn start_with(db: &Path, extra: &[&str], open_files: Option<u64>) -> Spawned {
        let mut command = Command::new(env!("CARGO_BIN_EXE_clues-lab"));
        if let Some(n) = open_files {
            use std::os::unix::process::CommandExt;
            // SAFETY: setrlimit is async-signal-safe and touches only the child's limits.
            unsafe {
                command.pre_exec(move || {
                    let lim = libc::rlimit {
                        rlim_cur: n,
                        rlim_max: n,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                });
            }
        }
        let mut child = command
            .arg("--database")
            .arg(super::db_url(db))
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--site-root",
                "/nonexistent",
            ])
            .args(extra)
            .env("RUST_LOG", "error")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the clues-lab binary starts");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let base = loop {
            let line = lines
                .next()
                .expect("the server printed its address")
                .unwrap();
            if let Some(url) = line.strip_prefix("listening on ") {
                break url.trim().to_string();
            }
        };
        // Keep reading stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Spawned { child, base }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident bytes now.
    pub fn rss(&self) -> u64 {
        server::load::client::rss(self.pid())
    }

    /// kill -9, and wait for the process to be gone.
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub const MB: u64 = 1024 * 1024;
