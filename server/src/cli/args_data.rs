//! The command line's data commands (`import`, `crossfit`): the CLUES and CrossFit importers,
//! CrossFit's sampler, learners, partitions and scores.

use clap::{Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Import the official CLUES JSONL data: a folder of task folders (SST-2, MNLI, CoNLL2003,
    /// WikiANN_EN, SQuAD-v2, ReCoRD) or one task folder. All or nothing; prints a quality report.
    Clues {
        /// The data folder.
        dir: PathBuf,
    },
    /// Import a task of your own in the CLUES layout: a folder with `<prefix>_test.jsonl`,
    /// `<prefix>_train_<k>_<split>.jsonl` and a `task.json` (name, family, description,
    /// labels with definition and example). The same checks and report as `import clues`.
    Task {
        /// The task folder.
        dir: PathBuf,
    },
    /// Import CrossFit text-to-text tasks: a folder (searched recursively) of
    /// `<task>_<k>_<seed>_{train,dev,test}.tsv` files, with an optional `tasks.json`
    /// (`{"<task>": {"ontology": "cls/...", "metric": "ACC"}}`). All or nothing.
    Crossfit { dir: PathBuf },
    /// Sample a CrossFit task from a source file of `input<TAB>output` lines for the five seeds
    /// (numpy-exact), with the given test file as the test set of every seed.
    CrossfitSource(CrossfitSourceArgs),
    /// Import another system's predictions for a task's test set (scored and reported like a model).
    #[cfg(feature = "models")]
    Predictions(learners::command::ImportPredictionsArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KindArg {
    /// k per output label.
    Classification,
    /// The first k lines.
    TextToText,
}

#[derive(Debug, clap::Args)]
pub struct CrossfitSourceArgs {
    #[arg(long)]
    pub task: String,
    /// The training source: `input<TAB>output` per line.
    #[arg(long)]
    pub source: PathBuf,
    /// The test set, the same for every seed.
    #[arg(long)]
    pub test: PathBuf,
    #[arg(long, value_enum)]
    pub kind: KindArg,
    /// Shots: per label for classification (default 16), lines otherwise (default 32).
    #[arg(long)]
    pub k: Option<usize>,
    #[arg(long, default_value = "")]
    pub ontology: String,
    #[arg(long, default_value = "ACC")]
    pub metric: String,
}

#[derive(Debug, Subcommand)]
pub enum CrossfitCommand {
    /// The task -> metric table, with seeds, k and test sizes.
    Tasks,
    /// Change a task's ontology path or metric.
    Set {
        #[arg(long)]
        task: String,
        #[arg(long)]
        ontology: Option<String>,
        #[arg(long)]
        metric: Option<String>,
    },
    /// Store a run: a file with one prediction per line, in the order of the test file.
    Run {
        #[arg(long)]
        method: String,
        #[arg(long)]
        task: String,
        #[arg(long)]
        seed: u32,
        predictions: PathBuf,
    },
    /// Run a reference method (majority-output or nearest-input) on every seed of a task, or
    /// of every task, that has no run of it yet (a run cut short goes on where it stopped).
    Baseline {
        #[arg(long)]
        method: String,
        #[arg(long)]
        task: Option<String>,
    },
    /// Import a partition (CrossFit's JSON: {"train": [...], "dev": [...], "test": [...]}).
    PartitionImport {
        #[arg(long)]
        name: String,
        file: PathBuf,
    },
    /// Print a stored partition as JSON.
    PartitionExport { name: String },
    /// Make a task for human studies from one seed of a CrossFit task (`xf-<task>-s<seed>`):
    /// workers answer in a free-text box, scored with the task's metric.
    StudyTask {
        #[arg(long)]
        task: String,
        #[arg(long, default_value_t = 100)]
        seed: u32,
    },
    /// CrossFit's direct fine-tuning of a text-to-text model folder (BART) on every seed of a
    /// task without a run yet: the grid of learning rates and batch sizes, the best development
    /// checkpoint decoded greedily on the test set, stored as a run of the method.
    #[cfg(feature = "models")]
    Learn(learners::crossfit::LearnArgs),
    /// CrossFit's upstream learning on a partition's train tasks (multi-task learning,
    /// first-order MAML or Reptile), the checkpoint chosen on its dev tasks, then direct
    /// fine-tuning from it on each test task and its ARG against direct fine-tuning.
    #[cfg(feature = "models")]
    Upstream(learners::crossfit::upstream::UpstreamArgs),
    /// The paper's Table 2 layout: for each method, its mean relative gain over the baseline
    /// on each test task of the partition (over the seeds) and its ARG (mean ± std over seeds).
    Table {
        #[arg(long)]
        partition: String,
        /// The methods, comma-separated (e.g. the upstream methods' fine-tuning runs).
        #[arg(long, value_delimiter = ',', required = true)]
        methods: Vec<String>,
        /// What every method is compared with (e.g. direct fine-tuning).
        #[arg(long)]
        baseline: String,
    },
    /// Average relative gain of a method over a baseline on a partition's test tasks.
    Arg {
        #[arg(long)]
        partition: String,
        #[arg(long)]
        method: String,
        #[arg(long)]
        baseline: String,
    },
}
