//! Bounds that hold for a whole compile (src/eval/compiler/limits.rs), end to end with the real
//! binary: many large strings, strings made long by one function (a separator, a global
//! replacement), template output (EPP, ERB in Ordo and in the machine's Ruby), resources
//! declared by a fan-out of defines, arrays and hashes nested or doubled by `reduce`. Each
//! must stop with an evaluation error naming the line, under a memory cap and in bounded
//! time, never exhaust the machine.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ORDO: &str = env!("CARGO_BIN_EXE_ordo");

/// The address space the compile may use: well above what the bounds allow, far below
/// what the attacks would take without them.
const MEMORY_CAP: &str = "--as=8589934592";

/// `ordo compile` of `manifest` (under `prlimit`, when there is one), with a time limit:
/// exit code and standard error.
fn compile(manifest: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let pp = dir.path().join("site.pp");
    std::fs::write(&pp, manifest).unwrap();
    compile_file(&pp, &[])
}

/// `ordo compile FILE ARGS` as [`compile`] runs it.
fn compile_file(pp: &std::path::Path, args: &[&str]) -> (i32, String) {
    let mut c = if Command::new("prlimit").arg("--version").output().is_ok() {
        let mut c = Command::new("prlimit");
        c.arg(MEMORY_CAP).arg(ORDO);
        c
    } else {
        Command::new(ORDO)
    };
    c.arg("compile")
        .arg(pp)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            let _ = child.wait();
            let text = std::fs::read_to_string(pp).unwrap_or_default();
            panic!("ordo compile did not finish within 300 s:\n{text}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn refused(manifest: &str, message: &str, line: u32) {
    let (code, err) = compile(manifest);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(message), "expected {message:?} in:\n{err}");
    assert!(
        err.contains(&format!("line: {line}")),
        "expected line {line} in:\n{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

const BUDGET: &str = "evaluation stopped: this compile holds more than 2147483648 bytes of memory";
const ONE_STRING: &str = "one value may have";

#[test]
fn many_large_strings_pass_the_compile_budget() {
    refused(
        "$s = sprintf('%0100000d', 1)\n$x = Integer[1, 60000].map |$i| { \"${s}${i}\" }\n",
        BUDGET,
        2,
    );
    // Each a function result, each under the bound of one string.
    refused(
        "$x = Integer[1, 60000].map |$i|\n  { sprintf('%0100000d', $i) }\n",
        BUDGET,
        2,
    );
}

#[test]
fn one_function_cannot_make_a_string_past_the_bound_of_one() {
    // A long separator between many elements is measured before it is joined.
    refused(
        "$a = Integer[1, 100000].map |$i| { $i }\n$s = sprintf('%010000d', 1)\n$j = $a.join($s)\n",
        ONE_STRING,
        3,
    );
    // A long replacement at each empty match of a global substitution.
    refused(
        "$s = sprintf('%0100000d', 1)\n$t = sprintf('%05000d', 1)\n$j = regsubst($t, '', $s, 'G')\n",
        ONE_STRING,
        3,
    );
}

#[test]
fn template_output_is_bounded() {
    // EPP: a loop writing a variable's long value.
    refused(
        "$s = sprintf('%0100000d', 1)\n\n$x = inline_epp('<% Integer[1, 999999].each |$i| { -%><%= $s %><% } -%>', {'s' => $s})\n",
        ONE_STRING,
        1,
    );
    // ERB run by Ordo: many strings each under Ruby's `*` bound.
    refused(
        "$x = inline_template('<% a = (1..1000).map { \"x\" * 16_000_000 } %><%= a.size %>')\n",
        BUDGET,
        1,
    );
}

#[test]
fn nesting_and_doubling_by_reduce_are_bounded() {
    refused(
        "notice('a')\n$m = Integer[1, 20000].reduce({}) |$m, $i| { {'a' => $m} }\n",
        "evaluation stopped: an array or hash nested more than 1000 levels deep",
        2,
    );
    refused(
        "$m = Integer[1, 2000].reduce([]) |$m, $i| { [$m] }\n",
        "nested more than 1000 levels deep",
        1,
    );
    let many = "evaluation stopped: an array or hash of more than 1000000 elements";
    refused(
        "$m = Integer[1, 40].reduce({}) |$m, $i| { {'a' => $m, 'b' => $m} }\n",
        many,
        1,
    );
    refused(
        "$m = Integer[1, 40].reduce([1]) |$m, $i| { $m + $m }\n",
        many,
        1,
    );
    refused(
        "$m = Integer[1, 40].reduce([1]) |$m, $i| { [$m, $m].flatten }\n",
        many,
        1,
    );
}

#[test]
fn resources_declared_are_bounded() {
    // 3,000 defines of 1,000 resources each; no lambda at all in the fan-out.
    refused(
        "$t = Integer[1, 1000].map |$i| { \"t${i}\" }\n\
         define d() { notify { $::t.map |$x| { \"${title}-${x}\" }: } }\n\
         $u = Integer[1, 3000].map |$i| { \"u${i}\" }\n\
         d { $u: }\n",
        "evaluation stopped: more than 200000 resources in one compile",
        2,
    );
}

#[test]
fn iterations_are_bounded_without_materializing() {
    refused(
        "Integer[1, 1000000000].each |$i| { }\n",
        "cannot iterate over 1000000000 elements (at most 1000000)",
        1,
    );
    refused(
        "\n$x = inline_template('<% (1..1_000_000_000).each do |i| %>x<% end %>')\n",
        "evaluation stopped",
        2,
    );
}

/// ERB that only the machine's Ruby can run (`loop`, `while`): a memory cap and a time
/// budget on the child, then a clear error.
#[test]
fn ruby_templates_have_a_memory_cap_and_a_time_budget() {
    let ruby = Command::new("ruby").arg("--version").output().is_ok();
    if !crate::common::prerequisite(ruby, "ruby") {
        return;
    }
    refused(
        "$x = inline_template('<% s = []; while true; s << (\"x\" * 100_000_000); end %>')\n",
        "failed to allocate memory: Ruby may use 2147483648 bytes of memory",
        1,
    );
    let start = Instant::now();
    refused(
        "\n$x = inline_template('<% loop do %>x<% end %>')\n",
        "Ruby did not answer within 20 seconds and was stopped",
        2,
    );
    assert!(start.elapsed() < Duration::from_secs(120));
}

/// Ordo's ERB parser and interpreter: code nested 100,000 deep is refused (it overflowed
/// the stack: SIGABRT), and arrays or hashes a template nests or doubles are bounded.
#[test]
fn erb_nesting_is_bounded() {
    let deep = format!(
        "$x = inline_template('<%= {}{} %>')\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    refused(&deep, "code nested more than 200 levels deep", 1);
    let blocks = format!(
        "\n$x = inline_template('<% {}{} %>')\n",
        "[1].each do |x| ".repeat(100_000),
        " end".repeat(100_000)
    );
    refused(&blocks, "code nested more than 200 levels deep", 2);
    // Strings nested in `#{}` (each level was lexed again from a copy: a 60 s time-out);
    // the error does not draw the megabyte-long tag.
    let strings = format!(
        "$x = inline_template('<%= \"{}x{}\" %>')\n",
        "#{\"".repeat(100_000),
        "\"}".repeat(100_000)
    );
    refused(&strings, "code nested more than 200 levels deep", 1);
    let (_, err) = compile(&strings);
    assert!(err.len() < 2_000);
    // A bound reached is not a construct Ordo's ERB lacks.
    assert!(!err.contains("does not support"), "{err}");
    // Chains nest the tree without brackets (they overflowed the stack: SIGABRT).
    for chain in [
        "1".to_string() + &" + 1".repeat(100_000),
        "true".to_string() + &" && true".repeat(100_000),
        "[1]".to_string() + &"[0]".repeat(100_000),
        "\"a\"".to_string() + &".to_s".repeat(100_000),
        "true ? ".repeat(100_000) + "1" + &" : 2".repeat(100_000),
    ] {
        refused(
            &format!("$x = inline_template('<%= {chain} %>')\n"),
            "chains of more than 1000 operators, calls or branches are not supported",
            1,
        );
    }
    refused(
        &format!(
            "\n\n$x = inline_template('<% if false %>{}<% end %>')\n",
            "<% elsif false %>".repeat(100_000)
        ),
        "chains of more than 1000",
        3,
    );
    let (code, err) = compile(&format!(
        "$x = inline_template('<%= 1{} %>')\n",
        " + 1".repeat(900)
    ));
    assert_eq!(code, 0, "{err}");
    refused(
        "$x = inline_template('<% a = 1; (1..100000).each { a = [a] } %><%= a.size %>')\n",
        "nested more than 1000 levels deep",
        1,
    );
    refused(
        "$x = inline_template('<% a = [1]; (1..60).each { a << a } %><%= a.size %>')\n",
        "an array or hash of more than 1000000 elements",
        1,
    );
}

/// An `elsif` chain nests the tree without a bracket: 1,000 branches compile (as in Puppet
/// 7), 100,000 are refused by the parser (they overflowed the stack: SIGABRT).
#[test]
fn elsif_chains_are_bounded() {
    let chain = |n: usize| format!("\nif $facts['x'] {{}}{}\n", " elsif false {}".repeat(n));
    let (code, err) = compile(&chain(1_000));
    assert_eq!(code, 0, "{err}");
    // Tests with operators: each branch's test is a chain of its own, not one long chain.
    let tests: String = (1..1_000)
        .map(|i| format!("elsif $x == {i} and $x != 0 {{ }}\n"))
        .collect();
    let (code, err) = compile(&format!("$x = 1\nif $x == 0 {{ }}\n{tests}"));
    assert_eq!(code, 0, "{err}");
    refused(
        &chain(100_000),
        "An if with more than 5000 elsif branches is not supported",
        2,
    );
}

/// The depth bounds compounding (each class of a 1,100-class `include` chain nests its
/// `include` 190 brackets deep; a recursive function with a deep body) end in Puppet's
/// "stack level too deep" with a location, also on the threads of `compile --nodes`, whose
/// stack was 8 MiB (they aborted at 1,000 `elsif` branches).
#[test]
fn compounded_depth_is_stack_level_too_deep() {
    let d = 190;
    let classes: String = (0..1100)
        .map(|i| {
            format!(
                "class c{i} {{ $x = {}include(c{}){} }}\n",
                "[".repeat(d),
                i + 1,
                "]".repeat(d)
            )
        })
        .collect();
    let includes = format!("{classes}class c1100 {{}}\ninclude c0\n");
    let function = format!(
        "function f($n) {{ {} if $n > 0 {{ f($n - 1) }} else {{ 0 }} {} }}\nnotice(f(199))\n",
        "[".repeat(d),
        "]".repeat(d)
    );
    for manifest in [&includes, &function] {
        let (code, err) = compile(manifest);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("stack level too deep"), "{err}");
        assert!(err.contains("line: "), "{err}");
    }
    // `compile --nodes` with two threads.
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes");
    std::fs::create_dir(&nodes).unwrap();
    for n in ["a", "b"] {
        std::fs::write(nodes.join(format!("{n}.json")), "{\"kernel\": \"Linux\"}").unwrap();
    }
    for manifest in [
        format!("if true {{}}{}\n", " elsif false {}".repeat(1_000)),
        includes,
    ] {
        let pp = dir.path().join("site.pp");
        std::fs::write(&pp, &manifest).unwrap();
        let out = Command::new(ORDO)
            .args(["compile", "--jobs", "2", "--nodes"])
            .arg(&nodes)
            .arg("--outdir")
            .arg(dir.path().join("out"))
            .arg(&pp)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let deep = manifest.contains("class");
        assert_eq!(out.status.code(), Some(if deep { 1 } else { 0 }), "{err}");
        assert!(!deep || err.contains("stack level too deep"), "{err}");
    }
}

/// A "billion laughs" in Hiera data (ten anchors, each nine aliases of the one before:
/// 10^9 values once copied) is refused at once; aliases that expand to little still work.
#[test]
fn yaml_aliases_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(
        dir.path().join("hiera.yaml"),
        "---\nversion: 5\ndefaults:\n  datadir: data\n  data_hash: yaml_data\nhierarchy:\n  - name: common\n    path: common.yaml\n",
    )
    .unwrap();
    let mut bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n".to_string();
    for (p, q) in "abcdefghi".chars().zip("bcdefghij".chars()) {
        bomb += &format!("{q}: &{q} [{}]\n", vec![format!("*{p}"); 9].join(", "));
    }
    let pp = dir.path().join("site.pp");
    std::fs::write(&pp, "\nnotice(lookup('c'))\n").unwrap();
    for (data, want) in [
        (
            bomb.as_str(),
            Err("aliases expand to more than 1000000 values"),
        ),
        ("a: &a [1, 2]\nc: [*a, *a]\n", Ok("[[1, 2], [1, 2]]")),
    ] {
        std::fs::write(dir.path().join("data/common.yaml"), data).unwrap();
        let start = Instant::now();
        let out = Command::new(ORDO)
            .arg("compile")
            .arg(&pp)
            .arg("--hiera-config")
            .arg(dir.path().join("hiera.yaml"))
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        match want {
            Err(message) => {
                assert_eq!(out.status.code(), Some(1), "{err}");
                assert!(err.contains(message) && err.contains("line: 2"), "{err}");
            }
            Ok(notice) => {
                assert_eq!(out.status.code(), Some(0), "{err}");
                assert!(err.contains(notice), "{err}");
            }
        }
        assert!(start.elapsed() < Duration::from_secs(60));
    }
}

/// A Hiera data file or config that is there but is no regular file (a FIFO would block the
/// compile for ever, a directory or a link loop cannot be read) is refused at the lookup
/// that needs it, at once; it was taken for a missing file, and the lookup's default used.
#[test]
fn hiera_files_that_are_not_regular_files_are_refused() {
    if Command::new("mkfifo").arg("--version").output().is_err() {
        assert!(std::env::var("CI").is_err(), "mkfifo is needed under CI");
        eprintln!("skipped: no mkfifo");
        return;
    }
    let run = |dir: &std::path::Path, args: &[&str]| compile_file(&dir.join("site.pp"), args);
    let site = "\n$x = lookup('k', undef, undef, 'fallback')\nnotify { $x: }\n";
    // The environment's default hierarchy: data/common.yaml, a FIFO.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("site.pp"), site).unwrap();
    std::fs::create_dir(d.path().join("data")).unwrap();
    let fifo = d.path().join("data/common.yaml");
    crate::common::mkfifo(&fifo);
    let (code, err) = run(d.path(), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("common.yaml") && err.contains("a FIFO"),
        "{err}"
    );
    assert!(err.contains("line: 2"), "{err}");
    // The environment's hiera.yaml a directory; a link loop as data.
    std::fs::remove_file(&fifo).unwrap();
    std::os::unix::fs::symlink("common.yaml", &fifo).unwrap();
    let (code, err) = run(d.path(), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Unable to read"), "{err}");
    std::fs::remove_file(&fifo).unwrap();
    std::fs::create_dir(d.path().join("hiera.yaml")).unwrap();
    let (code, err) = run(d.path(), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("a directory"), "{err}");
    // --hiera-config a FIFO.
    std::fs::remove_dir(d.path().join("hiera.yaml")).unwrap();
    let global = d.path().join("global.yaml");
    crate::common::mkfifo(&global);
    let (code, err) = run(d.path(), &["--hiera-config", global.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("a FIFO"), "{err}");
    // Missing files are still no data: the lookup's default.
    std::fs::remove_file(&global).unwrap();
    let (code, err) = run(d.path(), &[]);
    assert_eq!(code, 0, "{err}");
}
