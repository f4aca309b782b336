//! Module custom facts (`lib/facter/*.rb`) through the binary: `ordo facts --modulepath` and
//! `ordo apply` give what real `facter --custom-dir` gives for the same files (run at test
//! time: skipped with a printed reason when facter or ruby is absent, a failure under
//! CI=true); a fact that raises is a warning and absent; Ruby is started only when a module
//! ships a custom fact, and its absence is a warning naming the package.

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ORDO: &str = env!("CARGO_BIN_EXE_ordo");

/// Custom facts of the kinds modules write, over two files of module `m1` and one of `m2`.
const FACTS_A: &str = r#"
Facter.add(:t_block) { setcode { "on #{Facter.value(:kernel)}" } }
Facter.add(:t_shell) { setcode 'echo  from the shell  ' }
Facter.add(:t_shell_missing) { setcode 'no-such-command-ordo-test --x' }
Facter.add(:t_confine_true) { confine :kernel => 'Linux'; setcode { 'yes' } }
Facter.add(:t_confine_false) { confine :kernel => 'windows'; setcode { 'no' } }
Facter.add(:t_confine_array) { confine 'osfamily' => ['RedHat', 'Debian', 'Suse', 'Archlinux', 'Gentoo']; setcode { 'listed' } }
Facter.add(:t_confine_lambda) { confine :kernel => lambda { |k| k.start_with?('lin') }; setcode { 'lambda' } }
Facter.add(:t_confine_block) { confine { Facter.value(:t_block).nil? }; setcode { 'never' } }
Facter.add(:t_confine_fact_block) { confine(:os) { |os| os['family'].is_a?(String) }; setcode { 'structured' } }
Facter.add(:t_weight) { has_weight 10; setcode { 'ten' } }
Facter.add(:t_weight) { has_weight 50; setcode { 'fifty' } }
Facter.add(:t_weight) { has_weight 90; confine :kernel => 'nope'; setcode { 'ninety' } }
Facter.add(:t_weight) { has_weight 70; setcode { nil } }
Facter.add(:t_confines_weigh) { setcode { 'plain' } }
Facter.add(:t_confines_weigh) { confine :kernel => 'Linux'; setcode { 'confined' } }
Facter.add(:t_raises) { setcode { raise 'this fact fails' } }
Facter.add(:t_after_raise) { has_weight 1; setcode { 'low' } }
Facter.add(:t_after_raise) { has_weight 5; setcode { raise ArgumentError, 'high fails' } }
Facter.add(:t_struct) { setcode { { 'list' => [1, 2.5, true, nil, :sym], 'nested' => { 'k' => 'v' } } } }
Facter.add(:t_exec) { setcode { Facter::Core::Execution.execute('uname -s') } }
Facter.add(:t_exec_missing) { setcode { Facter::Core::Execution.exec('no-such-command-ordo-test') } }
Facter.add(:t_util_exec) { setcode { Facter::Util::Resolution.exec('echo util') } }
Facter.add(:t_which) { setcode { Facter::Core::Execution.which('sh') } }
Facter.add(:t_execute_raises) { setcode { Facter::Core::Execution.execute('no-such-command-ordo-test') } }
Facter.add(:kernel) { setcode { 'no weight: the core fact stays' } }
Facter.add(:osfamily) { has_weight 1; setcode { 'weighted: replaces the core fact' } }
Facter.add(:t_aggregate, :type => :aggregate) do
  chunk(:one) { { 'k' => [1] } }
  chunk(:two) { { 'k' => [2], 'other' => 'x' } }
end
Facter.add(:t_aggregate_sum, :type => :aggregate) do
  chunk(:base) { 20 }
  chunk(:more, :require => [:base]) { |b| b + 1 }
  aggregate { |chunks| chunks.values.sum }
end
Facter.add('T_Mixed_Case') { setcode { 7 } }
Facter.add(:t_nil) { setcode { nil } }
Facter.add(:t_named, :name => 'first') { setcode { 'named' } }
"#;

const FACTS_B: &str = r#"
Facter.add(:t_dep) { setcode { Facter.value(:t_block).upcase + ' ' + Facter.value('os.family') + ' ' + Facter.fact(:t_shell).value } }
Facter.add(:t_dep_on_m2) { setcode { "m2 says #{Facter.value(:t_other_module)}" } }
Facter.add(:t_cycle_a) { setcode { "a(#{Facter.value(:t_cycle_b).inspect})" } }
Facter.add(:t_cycle_b) { setcode { "b(#{Facter.value(:t_cycle_a).inspect})" } }
"#;

const FACTS_M2: &str = r#"
require 'facter'
Facter.add(:t_other_module) { setcode { Facter.value(:t_confine_true) + '!' } }
"#;

/// Custom facts against external facts (`facts.d`, weight 10,000) and `FACTER_` variables
/// (1,000,000), resolution options, values of other types, more kinds of confine.
const FACTS_C: &str = r##"
Facter.add(:t_ext_low) { setcode { 'custom' } }
Facter.add(:t_ext_heavy) { has_weight 20_000; setcode { 'custom, heavier than facts.d' } }
Facter.add(:t_env) { has_weight 20_000; setcode { 'custom' } }
Facter.add(:t_reads_ext) { setcode { "#{Facter.value(:t_ext_low)} #{Facter.value(:t_ext_only)} #{Facter.value(:t_env)}" } }
Facter.add(:t_value_option, :value => 'static')
Facter.add(:t_weight_option, :weight => 5) { setcode { 'five' } }
Facter.add(:t_weight_option) { has_weight 3; setcode { 'three' } }
Facter.add(:t_time) { setcode { Time.at(86_400).utc } }
Facter.add(:t_keys) { setcode { { :sym => 1, 2 => 'two', 'list' => [:a] } } }
Facter.add(:t_invalid) { setcode { Object.new } }
Facter.add(:t_range) { confine :processorcount => (1..1024); setcode { 'range' } }
Facter.add(:t_regexp) { confine :kernel => /^LIN/i; setcode { 'regexp' } }
Facter.add(:t_structured_lambda) { confine 'os' => ->(os) { os['name'].is_a?(String) }; setcode { 'os' } }
Facter.define_fact(:t_defined) { define_resolution(:r1) { setcode { 'defined' } } }
Facter.add(:t_timeout, :timeout => 5) { setcode { 'in time' } }
"##;

/// External facts of the same names, given to both as `--external-dir`.
const EXTERNAL: &str = "t_ext_low=external\nt_ext_heavy=external\nt_env=external\nt_ext_only=ext\n";

/// A file that fails as it loads: its facts are absent, the others are not.
const FACTS_BROKEN: &str = "Facter.add(:t_broken) { setcode { 1 } }\nraise 'the file fails'\n";

/// A modulepath with modules m1 and m2 shipping the facts above; and the names queried.
fn modulepath(root: &Path) -> Vec<String> {
    let write = |m: &str, f: &str, text: &str| {
        let d = root.join(m).join("lib/facter");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(f), text).unwrap();
    };
    write("m1", "a.rb", FACTS_A);
    write("m1", "b.rb", FACTS_B);
    write("m1", "broken.rb", FACTS_BROKEN);
    write("m1", "c.rb", FACTS_C);
    write("m2", "other.rb", FACTS_M2);
    std::fs::create_dir_all(root.join("ext")).unwrap();
    std::fs::write(root.join("ext/e.txt"), EXTERNAL).unwrap();
    let mut names: Vec<String> = [FACTS_A, FACTS_B, FACTS_C, FACTS_M2, FACTS_BROKEN]
        .iter()
        .map(|t| t.replace("Facter.define_fact(", "Facter.add("))
        .flat_map(|t| {
            t.split("Facter.add(")
                .skip(1)
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .map(|s| {
            let name = s.split([')', ',']).next().unwrap();
            name.trim_matches([':', '\'']).to_lowercase()
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Runs facter or ordo with a `FACTER_` variable that outweighs a custom fact.
fn run(cmd: &mut Command) -> Output {
    cmd.env("NO_COLOR", "1")
        .env("FACTER_t_env", "from the environment")
        .output()
        .unwrap()
}

/// Facter's answer for these names, with the custom facts of `dirs` and external `ext`.
fn facter(dirs: &[&Path], ext: &Path, names: &[String]) -> Json {
    let mut c = Command::new("facter");
    c.arg("--external-dir").arg(ext);
    for d in dirs {
        c.arg("--custom-dir").arg(d);
    }
    let out = run(c.arg("--json").args(names));
    // Facter exits 1 when a fact failed; its JSON is printed all the same.
    serde_json::from_slice(&out.stdout).expect("facter prints JSON")
}

fn ordo_facts(args: &[&str], names: &[String]) -> (Json, String) {
    let out = run(Command::new(ORDO)
        .arg("facts")
        .args(args)
        .arg("--json")
        .args(names));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "ordo facts failed: {stderr}");
    (
        serde_json::from_slice(&out.stdout).expect("JSON output"),
        stderr,
    )
}

/// The modulepath of the facts above in a temp dir, the names, the folders of custom facts,
/// and facter's answer; `None` (skipped, with the reason) without facter or ruby.
fn with_facters_answer() -> Option<(tempfile::TempDir, Vec<String>, [PathBuf; 2], Json)> {
    if !super::common::tool("facter") || !super::common::tool("ruby") {
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let names = modulepath(tmp.path());
    let dirs = ["m1", "m2"].map(|m| tmp.path().join(m).join("lib/facter"));
    let want = facter(&[&dirs[0], &dirs[1]], &tmp.path().join("ext"), &names);
    Some((tmp, names, dirs, want))
}

#[test]
fn custom_facts_are_facters() {
    let Some((tmp, names, [m1, m2], want)) = with_facters_answer() else {
        return;
    };
    let mp = tmp.path().to_str().unwrap();
    let ext = tmp.path().join("ext");
    let ext = ext.to_str().unwrap();
    let (got, stderr) = ordo_facts(&["--modulepath", mp, "--external-dir", ext], &names);
    let mut wrong = Vec::new();
    for n in &names {
        if got.get(n) != want.get(n) {
            wrong.push(format!(
                "{n}: facter {:?}, ordo {:?}",
                want.get(n),
                got.get(n)
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "differs from facter:\n{}",
        wrong.join("\n")
    );
    // The facts that must have a value do (the comparison is not between two nothings).
    for n in [
        "t_block",
        "t_dep",
        "t_weight",
        "t_aggregate",
        "t_dep_on_m2",
        "osfamily",
        "t_ext_heavy",
        "t_env",
        "t_time",
        "t_keys",
    ] {
        assert!(!got[n].is_null(), "{n} has no value");
    }
    // What failed is a warning, and the run went on.
    for w in [
        "fact='t_raises', resolution='<anonymous>': this fact fails",
        "high fails",
        "Caught recursion on t_cycle_",
        "broken.rb the file fails",
        "fact='t_invalid', resolution='<anonymous>' resolved to an invalid value",
    ] {
        assert!(stderr.contains(w), "no warning {w:?} in:\n{stderr}");
    }
    // The same files through facter's option.
    let (by_dir, _) = ordo_facts(
        &[
            "--external-dir",
            ext,
            "--custom-dir",
            m1.to_str().unwrap(),
            "--custom-dir",
            m2.to_str().unwrap(),
        ],
        &names,
    );
    assert_eq!(by_dir, got);
}

#[test]
fn apply_sees_the_modules_custom_facts() {
    let Some((tmp, _, _, want)) = with_facters_answer() else {
        return;
    };
    let mp = tmp.path().to_str().unwrap();
    let code = "notice(\"dep=${facts['t_dep']} w=${facts['t_weight']} fam=${facts['osfamily']} k=${facts['t_struct']['nested']['k']} raised=${'t_raises' in $facts}\")";
    let (status, out, err) = super::common::ordo(&["apply", "--modulepath", mp, "-e", code]);
    assert_eq!(status, 0, "{out}\n{err}");
    let want_line = format!(
        "dep={} w={} fam={} k={} raised=false",
        want["t_dep"].as_str().unwrap(),
        want["t_weight"].as_str().unwrap(),
        want["osfamily"].as_str().unwrap(),
        want["t_struct"]["nested"]["k"].as_str().unwrap(),
    );
    assert!(
        out.contains(&want_line),
        "no {want_line:?} in:\n{out}\n{err}"
    );
}

/// A `ruby` that only leaves a mark: whether Ordo started one.
fn fake_ruby(bin: &Path, mark: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let ruby = bin.join("ruby");
    std::fs::write(
        &ruby,
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", mark.display()),
    )
    .unwrap();
    std::fs::set_permissions(&ruby, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn ruby_runs_only_for_modules_with_custom_facts() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let mark = tmp.path().join("ruby-ran");
    fake_ruby(&bin, &mark);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Modules without lib/facter/*.rb (a manifest, a README in lib/facter).
    let mp = tmp.path().join("modules");
    std::fs::create_dir_all(mp.join("plain/manifests")).unwrap();
    std::fs::create_dir_all(mp.join("plain/lib/facter")).unwrap();
    std::fs::write(mp.join("plain/lib/facter/README"), "no facts").unwrap();
    let facts = |mp: &Path| {
        run(Command::new(ORDO)
            .args(["facts", "--json", "--modulepath"])
            .arg(mp)
            .arg("kernel")
            .env("PATH", &path))
    };
    let out = facts(&mp);
    assert!(out.status.success());
    assert!(
        !mark.exists(),
        "ruby was started for modules without custom facts"
    );
    // One custom fact: Ruby runs (this one fails: a warning, the other facts stay).
    std::fs::write(
        mp.join("plain/lib/facter/x.rb"),
        "Facter.add(:x) { setcode { 1 } }",
    )
    .unwrap();
    let out = facts(&mp);
    assert!(out.status.success());
    assert!(mark.exists(), "ruby was not started for a custom fact");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("custom facts (lib/facter/*.rb) are not set: ruby failed"),
        "{stderr}"
    );
    let got: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["kernel"], "Linux");
}

#[test]
fn without_ruby_custom_facts_are_absent_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let mp = tmp.path().join("modules");
    std::fs::create_dir_all(mp.join("m/lib/facter")).unwrap();
    std::fs::write(
        mp.join("m/lib/facter/x.rb"),
        "Facter.add(:custom_x) { setcode { 1 } }",
    )
    .unwrap();
    // A PATH with the usual tools but no ruby.
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["uname", "sh"] {
        if let Ok(p) = which(tool) {
            std::os::unix::fs::symlink(p, bin.join(tool)).unwrap();
        }
    }
    let out = run(Command::new(ORDO)
        .args(["facts", "--json", "--modulepath"])
        .arg(&mp)
        .args(["custom_x", "kernel"])
        .env("PATH", &bin));
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("are not set: `ruby` is not installed (install the package `ruby`)"),
        "{stderr}"
    );
    let got: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["custom_x"], Json::Null);
    assert_eq!(got["kernel"], "Linux");
}

fn which(tool: &str) -> Result<PathBuf, ()> {
    let paths = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&paths)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .ok_or(())
}
