//! `clues-lab worker` on a real Slurm cluster of one node (Debian's slurm-wlm and munge, with
//! daemons of this test's own under a temporary folder): CrossFit seeds queued with
//! `--queue-only`, the shipped CPU template (`server/slurm/`) as a job array of 3 workers that
//! exit when the queue is empty: in the middle of a job, one is cancelled with `scancel`, one
//! requeued with `scontrol requeue` and one preempted (requeued) by a job of a higher tier.
//! Every job finishes, once; a requeued task's log keeps both attempts. The GPU template is
//! refused by a node without GPUs.
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use common::tiny_seq2seq::{write_seq2seq_dir, Kind};
use domain::run::JobStatus;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A one-node cluster: munged, slurmctld and slurmd with their sockets, ports, state and logs
/// in `dir`; stopped when dropped.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
}

fn run(c: &mut Command) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{c:?}: {text}");
    text
}

impl Cluster {
    /// `None`, with a notice, where Slurm is not installed (`.ci/setup` installs it; under
    /// `CI` its absence fails the test).
    fn start(dir: &Path) -> Option<Cluster> {
        let have = |p: &str| Path::new(p).is_file();
        if !(have("/usr/sbin/slurmctld") && have("/usr/sbin/slurmd") && have("/usr/sbin/munged")) {
            let why = "Slurm is not installed (apt-get install slurm-wlm munge; .ci/setup does)";
            assert!(std::env::var_os("CI").is_none_or(|v| v.is_empty()), "{why}");
            eprintln!("SKIPPED the Slurm worker test: {why}");
            return None;
        }
        let dir = dir.to_path_buf();
        for sub in ["state", "spool"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        // munge's key: 1024 random bytes only its owner reads.
        let key = dir.join("munge.key");
        let mut bytes = [0u8; 1024];
        use std::io::Read;
        std::fs::File::open("/dev/urandom")
            .unwrap()
            .read_exact(&mut bytes)
            .unwrap();
        std::fs::write(&key, bytes).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let socket = dir.join("munge.socket");
        let p = |f: &str| dir.join(f).display().to_string();
        run(Command::new("/usr/sbin/munged")
            .arg("--force")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--pid-file={}", p("munged.pid")))
            .arg(format!("--log-file={}", p("munged.log")))
            .arg(format!("--seed-file={}", p("munged.seed"))));
        let host = run(&mut Command::new("hostname")).trim().to_string();
        let cluster = Cluster {
            conf: dir.join("slurm.conf"),
            dir,
        };
        common::ports::starting_again_where_taken("Slurm", || {
            cluster.write_conf(&host, &socket);
            let up = cluster.launch();
            if !up {
                cluster.stop_daemons();
            }
            up.then_some(())
        });
        Some(cluster)
    }

    /// slurm.conf: one node of 4 CPUs in two partitions (the higher tier preempts by
    /// requeueing), on two ports free now.
    fn write_conf(&self, host: &str, socket: &Path) {
        let p = |f: &str| self.dir.join(f).display().to_string();
        let [ctld_port, slurmd_port] = common::ports::free_ports();
        std::fs::write(
            &self.conf,
            format!(
                "ClusterName=cluesbench\nSlurmctldHost={host}(127.0.0.1)\n\
                 SlurmctldPort={ctld_port}\nSlurmdPort={slurmd_port}\n\
                 AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={}\n\
                 ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
                 SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
                 StateSaveLocation={}\nSlurmdSpoolDir={}\n\
                 SlurmctldPidFile={}\nSlurmdPidFile={}\n\
                 SlurmctldLogFile={}\nSlurmdLogFile={}\n\
                 SlurmUser=root\nSlurmdUser=root\nSlurmdParameters=config_overrides\n\
                 ReturnToService=2\nMpiDefault=none\nJobAcctGatherType=jobacct_gather/none\n\
                 AccountingStorageType=accounting_storage/none\nKillWait=30\n\
                 NodeName={host} NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN\n\
                 PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n\
                 PartitionName=bench Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1\n\
                 PartitionName=urgent Nodes=ALL MaxTime=INFINITE State=UP PriorityTier=2\n",
                socket.display(),
                p("state"),
                p("spool"),
                p("slurmctld.pid"),
                p("slurmd.pid"),
                p("slurmctld.log"),
                p("slurmd.log"),
            ),
        )
        .unwrap();
    }

    /// Starts slurmctld and slurmd and waits until the node is idle: `false` where a daemon
    /// found its port taken; any other failure to come up within 180 s fails the test.
    fn launch(&self) -> bool {
        let logs = ["slurmctld.log", "slurmd.log"].map(|f| self.dir.join(f));
        for log in &logs {
            let _ = std::fs::remove_file(log);
        }
        run(&mut self.cmd("/usr/sbin/slurmctld"));
        run(&mut self.cmd("/usr/sbin/slurmd"));
        // Until the controller listens, sinfo fails to connect; on a loaded machine it has
        // taken over a minute to start.
        let start = Instant::now();
        loop {
            let out = self.cmd("sinfo").args(["-h", "-o", "%t"]).output().unwrap();
            let said = String::from_utf8_lossy(&out.stdout).into_owned();
            if out.status.success() && said.contains("idle") {
                return true;
            }
            let read = |log: &PathBuf| std::fs::read_to_string(log).unwrap_or_default();
            if logs
                .iter()
                .any(|log| read(log).contains("Address already in use"))
            {
                return false;
            }
            assert!(
                start.elapsed() < Duration::from_secs(180),
                "the node never came up (sinfo: {said}{}): {}",
                String::from_utf8_lossy(&out.stderr),
                read(&logs[0])
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Stops slurmctld and slurmd by their pid files (a controller that failed to bind cannot
    /// take `scontrol shutdown`), and waits until both are gone.
    fn stop_daemons(&self) {
        for pid_file in ["slurmctld.pid", "slurmd.pid"] {
            let Ok(pid) = std::fs::read_to_string(self.dir.join(pid_file)) else {
                continue;
            };
            let pid = pid.trim().to_string();
            let _ = Command::new("kill").arg(&pid).output();
            let start = Instant::now();
            while Path::new(&format!("/proc/{pid}")).exists()
                && start.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = std::fs::remove_file(self.dir.join(pid_file));
        }
    }

    /// A Slurm command that reads this cluster's configuration.
    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }
}

impl Drop for Cluster {
    /// Cancels what still runs (a failed test's workers), then stops the daemons: slurmd
    /// leaves running jobs' step daemons behind.
    fn drop(&mut self) {
        let _ = self.cmd("scancel").arg("--partition=bench").output();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20)
            && self
                .cmd("squeue")
                .arg("-h")
                .output()
                .is_ok_and(|o| !o.stdout.is_empty())
        {
            std::thread::sleep(Duration::from_millis(200));
        }
        let _ = self.cmd("scontrol").arg("shutdown").output();
        if let Ok(pid) = std::fs::read_to_string(self.dir.join("munged.pid")) {
            let _ = Command::new("kill").arg(pid.trim()).output();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_array_cancelled_requeued_and_preempted_mid_job_finishes_every_job_once() {
    let (dir, url, pool, _) = common::tiny_bert::demo_with_model("slurm", 7).await;
    let Some(cluster) = Cluster::start(&dir.path().join("slurm")) else {
        return;
    };
    let bart = dir.path().join("tiny-bart");
    write_seq2seq_dir(&bart, Kind::Bart, 1, 7);
    let tasks = ["demo-xf-sentiment", "demo-xf-topic", "demo-xf-headline"];
    for task in tasks {
        let (ok, out) = common::clues(
            &url,
            &[
                "crossfit",
                "learn",
                "--model",
                bart.to_str().unwrap(),
                "--task",
                task,
                "--learning-rates",
                "0.003",
                "--batch-sizes",
                "2",
                // Long enough that a job is still running when its worker is stopped, 300 ms
                // into it: 150 steps took 0.4 s here (2026-12-03) and 4 runs of 8 stopped a
                // worker after its job had ended; 1,500 take about 4 s.
                "--steps",
                "1500",
                "--warmup",
                "2",
                "--eval-every",
                "1500",
                "--max-output-tokens",
                "6",
                "--queue-only",
            ],
        );
        assert!(ok, "{out}");
    }
    let jobs = 3 * 5;

    // The shipped templates: the GPU one asks for what a node without GPUs refuses at once.
    let template = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("slurm")
            .join(name)
    };
    let (cpu, gpu) = (
        template("workers-cpu.sbatch"),
        template("workers-gpu.sbatch"),
    );
    let directives = |f: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(f).unwrap();
        let text = text
            .replace("#SBATCH --gres=gpu:1\n", "")
            .replace("--device cuda", "--device cpu");
        let kept = |l: &&str| l.starts_with("#SBATCH") || !(l.starts_with('#') || l.is_empty());
        text.lines().filter(kept).map(String::from).collect()
    };
    assert_eq!(
        directives(&gpu),
        directives(&cpu),
        "the variants differ only in the GPU"
    );
    assert!(std::fs::read_to_string(&gpu)
        .unwrap()
        .contains("--gres=gpu:1"));
    let refused = cluster.cmd("sbatch").arg(&gpu).output().unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && said.contains("gres"), "{said}");

    // The CPU template as an array of 3 one-CPU workers of CrossFit seeds with short leases.
    let bin = Path::new(env!("CARGO_BIN_EXE_clues-lab")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let array = run(cluster
        .cmd("sbatch")
        .current_dir(dir.path())
        .env("PATH", path)
        .env("CLUES_DATABASE_URL", &url)
        .env(
            "CLUES_WORKER_ARGS",
            "--kinds crossfit --lease-seconds 5 --poll-seconds 1",
        )
        .args(["--parsable", "--array=1-3", "--cpus-per-task=1"])
        .arg(&cpu))
    .trim()
    .to_string();
    let out = |task: u32| {
        std::fs::read_to_string(dir.path().join(format!("clues-worker-{array}_{task}.out")))
            .unwrap_or_default()
    };

    // Task 1's worker, once it has trained a while on a job, is cancelled with scancel; task
    // 2's is requeued with scontrol; task 3's is preempted by a job of a partition of a higher
    // tier that needs every CPU of the node (PreemptMode=REQUEUE).
    let urgent = ["-p", "urgent", "--cpus-per-task=4", "--wrap", "sleep 1"];
    let stops: [(u32, &str, Vec<&str>); 3] = [
        (1, "scancel", vec![]),
        (2, "scontrol", vec!["requeue"]),
        (3, "sbatch", urgent.to_vec()),
    ];
    let mut stopped = Vec::new();
    for (task, program, args) in stops {
        let (worker, held) = held_a_while(&pool, &|| out(task)).await;
        let mut c = cluster.cmd(program);
        c.current_dir(dir.path()).args(args);
        if program != "sbatch" {
            c.arg(format!("{array}_{task}"));
        }
        run(&mut c);
        stopped.push((task, worker, held));
    }
    // Slurm holds a requeued job back for a while (its begin time, about 2 min on 22.05 here):
    // brought forward, as an admin can, so that the second attempts run within the test.
    for task in [2, 3] {
        let requeued = format!("{array}_{task}");
        let start = Instant::now();
        while run(cluster
            .cmd("squeue")
            .args(["-h", "-o", "%T %r", "-j", &requeued]))
        .trim()
            != "PENDING BeginTime"
        {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{requeued} never pending again"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let job = format!("JobId={requeued}");
        run(cluster
            .cmd("scontrol")
            .args(["update", &job, "StartTime=now"]));
    }

    // The array ends when the queue is empty.
    let start = Instant::now();
    while !run(cluster.cmd("squeue").args(["-h", "-j", &array]))
        .trim()
        .is_empty()
    {
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "the array never ended:\n{}\n{}\n{}",
            out(1),
            out(2),
            out(3)
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let logs = format!("{}\n{}\n{}", out(1), out(2), out(3));
    for (task, ..) in &stopped {
        assert!(
            out(*task).contains("SIGTERM") && out(*task).contains("handed"),
            "task {task}'s worker handed its job back: {logs}"
        );
    }
    // The requeued and the preempted task ran again in the same log, after their first
    // attempt's lines, and ended when the queue was empty.
    assert!(out(3).contains("DUE TO PREEMPTION"), "{logs}");
    for task in [2, 3] {
        let log = out(task);
        assert_eq!(log.matches(": takes").count(), 2, "task {task}: {logs}");
        let handed = log.find("handed").unwrap_or(usize::MAX);
        assert!(
            handed < log.rfind(": takes").unwrap_or(0),
            "task {task}: {logs}"
        );
        assert!(log.trim_end().ends_with("run here"), "task {task}: {logs}");
        assert!(log.contains("no job left"), "task {task}: {logs}");
    }
    let by_status: Vec<(JobStatus, i64)> =
        sqlx::query_as("SELECT status, COUNT(*) FROM jobs WHERE kind = 'crossfit' GROUP BY status")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(by_status, vec![(JobStatus::Done, jobs)], "{logs}");
    let per_seed: Vec<i64> = sqlx::query_scalar(
        "SELECT COUNT(*) FROM crossfit_runs WHERE method = 'tiny-bart direct fine-tuning'
         GROUP BY task_id, seed",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        per_seed,
        vec![1; jobs as usize],
        "each job stored once: {logs}"
    );
    for (task, victim, held) in &stopped {
        let (attempts, by): (i64, String) =
            sqlx::query_as("SELECT attempts, worker FROM jobs WHERE id = $1")
                .bind(held)
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(attempts, 2, "task {task}'s job: {logs}");
        assert_ne!(&by, victim, "another worker finished task {task}'s job");
    }
    eprintln!("the array's output:\n{logs}");
}

/// The worker whose log `out` gives, once it has trained on a job for 300 ms: its name (from
/// its first line, "worker NAME: takes ...") and the job's id.
async fn held_a_while(pool: &sqlx::AnyPool, out: &dyn Fn() -> String) -> (String, i64) {
    let start = Instant::now();
    loop {
        let text = out();
        let name = text.lines().find_map(|l| {
            l.strip_prefix("worker ")
                .and_then(|r| r.split_once(": takes"))
                .map(|(name, _)| name.to_string())
        });
        if let Some(name) = name {
            let claimed: Vec<(i64, Option<i64>)> = sqlx::query_as(
                "SELECT id, started_at FROM jobs WHERE kind = 'crossfit' AND status = 'claimed' AND worker = $1",
            )
            .bind(&name)
            .fetch_all(pool)
            .await
            .unwrap();
            let now = store::auth::now_ms();
            if let Some((id, _)) = claimed
                .into_iter()
                .find(|(_, at)| at.is_some_and(|at| now - at > 300))
            {
                return (name, id);
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "the worker never held a job: {text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
