//! The hardware a run ran on, in words, for its provenance: the CPU's model from
//! `/proc/cpuinfo`, and the GPU's from `nvidia-smi` (the name CUDA gives it).

use std::process::Command;

/// The CPU's model name and how many threads it offers ("unknown CPU" where the system does
/// not say).
pub fn cpu() -> String {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| model_name(&text))
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{model}, {threads} threads")
}

/// The first `model name` of a `/proc/cpuinfo`.
fn model_name(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
        .map(|(_, name)| name.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|name| !name.is_empty())
}

/// The GPUs' names as `nvidia-smi` lists them, or why they are unknown.
pub fn gpu() -> String {
    let listed = Command::new("nvidia-smi")
        .args(["--query-gpu=name,memory.total", "--format=csv,noheader"])
        .output();
    match listed {
        Ok(out) if out.status.success() => {
            let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
                .collect();
            if names.is_empty() {
                "GPU model unknown (nvidia-smi lists none)".into()
            } else {
                names.join("; ")
            }
        }
        Ok(_) | Err(_) => "GPU model unknown (no nvidia-smi)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_model_is_read_from_cpuinfo() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)  CPU @ 2.20GHz\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(
            model_name(text).as_deref(),
            Some("Intel(R) Xeon(R) CPU @ 2.20GHz")
        );
        assert_eq!(model_name("processor\t: 0\n"), None);
        assert!(cpu().ends_with(" threads"));
    }
}
