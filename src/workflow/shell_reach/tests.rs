use super::*;
use pretty_assertions::assert_eq;
use std::collections::BTreeMap;

/// The files `command` reaches in a tree of `files` (path, text).
fn reached(command: &str, files: &[(&str, &str)]) -> Vec<String> {
    let tree: BTreeMap<&str, &str> = files.iter().copied().collect();
    files_run(command, |path| {
        Ok::<_, ()>(tree.get(path).map(|t| (*t).to_string()))
    })
    .expect("reading a map does not fail")
}

#[test]
fn a_command_names_its_programs_scripts_and_sourced_files_where_it_runs_them() {
    let cases: [(&str, &[&str]); 30] = [
        ("sh check_mul.sh", &["check_mul.sh"]),
        ("./check_mul.sh", &["check_mul.sh"]),
        ("check_mul.sh", &[]),
        ("bash tools/check.sh mul", &["tools/check.sh"]),
        ("cd t && sh check_mul.sh", &["t/check_mul.sh"]),
        ("cd t; ./check_mul.sh", &["t/check_mul.sh"]),
        ("cd t/deep && sh ../check.sh", &["t/check.sh"]),
        ("cd t && cd .. && sh check.sh", &["check.sh"]),
        ("(cd t && sh a.sh) && sh b.sh", &["t/a.sh", "b.sh"]),
        ("cd && sh check.sh", &[]),
        ("cd \"$DIR\" && sh check.sh", &[]),
        ("cd /tmp && sh check.sh", &[]),
        ("cd .. && sh check.sh", &[]),
        ("env X=1 sh check.sh", &["check.sh"]),
        ("X=1 Y=2 ./check.sh", &["check.sh"]),
        ("env -i PATH=/bin sh check.sh", &["check.sh"]),
        ("env -C t sh check.sh && sh c.sh", &["t/check.sh", "c.sh"]),
        ("timeout 5 ./check.sh", &["check.sh"]),
        ("timeout -s KILL -k 1 5 sh check.sh", &["check.sh"]),
        ("nice -n 5 nohup command exec ./check.sh", &["check.sh"]),
        ("time sh -e check.sh", &["check.sh"]),
        ("bash -c './check.sh'", &["check.sh"]),
        ("sh -ec 'cd t && . ./lib.sh'", &["t/lib.sh"]),
        (". ./lib.sh && source lib2.sh", &["lib.sh", "lib2.sh"]),
        (
            "python3 -u tests/check.py && node -e 'x'",
            &["tests/check.py"],
        ),
        // What a command substitution runs is the code whose output is checked.
        ("[ \"$(sh calc.sh mul 4 3)\" = 12 ]", &[]),
        ("test -x ./check.sh && echo ./x.sh > out.sh 2>&1", &[]),
        ("sh \"$HOME/check.sh\" || sh ~/c.sh || sh /abs.sh", &[]),
        ("if sh a.sh; then ./b.sh; fi # sh c.sh", &["a.sh", "b.sh"]),
        (
            "cat <<EOF | sh\nsh inner.sh\nEOF\nsh after.sh",
            &["after.sh"],
        ),
    ];
    for (command, expected) in cases {
        assert_eq!(reached(command, &[]), expected, "{command}");
    }
}

#[test]
fn options_assignments_and_compound_commands_do_not_hide_what_runs() {
    let cases: [(&str, &[&str]); 19] = [
        ("X=$(sh gen.sh) sh check.sh", &["check.sh"]),
        ("./a.sh \"$(./b.sh)\" `./c.sh` $X$ $", &["a.sh"]),
        ("env X=\"$Y\" ./check.sh", &["check.sh"]),
        ("exec \"$@\"", &[]),
        ("sh -s < check.sh", &[]),
        ("command -v ./check.sh", &[]),
        ("xargs -n 1 sh check.sh < list", &["check.sh"]),
        ("nice -10 stdbuf -oL ./check.sh", &["check.sh"]),
        ("bash -x -o errexit ./check.sh", &["check.sh"]),
        ("! sh check.sh", &["check.sh"]),
        ("{ sh a.sh; } && f() { ./b.sh; }", &["a.sh", "b.sh"]),
        (
            "sh 'tools/my check.sh' 2>/dev/null | tee log",
            &["tools/my check.sh"],
        ),
        (
            "cat <<-'EOF' >x
	sh no.sh
	EOF
sh yes.sh",
            &["yes.sh"],
        ),
        (
            "python3 -m pytest tests/ && node --require x run.js",
            &["run.js"],
        ),
        ("while ./poll.sh; do sleep 1; done", &["poll.sh"]),
        ("for t in tests/*.sh; do sh \"$t\"; done", &[]),
        ("echo $(( 2 * 3 )) && ./a.sh \\\n  --flag", &["a.sh"]),
        ("case $1 in a) ./a.sh;; esac", &["a.sh"]),
        ("sh \"$DIR\"/check.sh && sh ./$X", &[]),
    ];
    for (command, expected) in cases {
        assert_eq!(reached(command, &[]), expected, "{command}");
    }
}

#[test]
fn a_shell_script_reached_is_read_for_what_it_runs_in_turn() {
    let files: &[(&str, &str)] = &[
        (
            "run_tests.sh",
            "#!/bin/sh\nset -e\nsh check_mul.sh\n./t/check_add.sh\n",
        ),
        (
            "check_mul.sh",
            ". ./lib.sh\n[ \"$(sh calc.sh mul 4 3)\" = 12 ]\n",
        ),
        ("lib.sh", "helper() { :; }\n"),
        (
            "t/check_add.sh",
            "#!/usr/bin/env bash\ncd \"$(dirname \"$0\")\"\nsh more.sh\n",
        ),
        ("t/more.sh", "sh ../deeper.sh\n"),
        ("deeper.sh", "sh deepest.sh\n"),
        ("deepest.sh", "sh too_deep.sh\n"),
        ("too_deep.sh", "sh deeper2.sh\n"),
        ("deeper2.sh", "sh deeper3.sh\n"),
        ("deeper3.sh", "sh deeper4.sh\n"),
        (
            "check.py",
            "import subprocess\nsubprocess.run(['sh', 'hidden.sh'])\n",
        ),
        (
            "t/driver.sh",
            "sh \"$(dirname \"$0\")/check.sh\"\n. \"${0%/*}/lib.sh\"\n\"$(dirname \"$0\")\"/run.sh\n\
             sh \"$(dirname \"$0\")/$NAME.sh\"\n",
        ),
    ];
    let cases: [(&str, &[&str]); 7] = [
        (
            "sh run_tests.sh",
            &[
                "run_tests.sh",
                "check_mul.sh",
                "t/check_add.sh",
                "lib.sh",
                "t/more.sh",
                "deeper.sh",
                // Run from `t`, where `t/check_add.sh` moved to.
                "t/deepest.sh",
            ],
        ),
        (
            "cd t && sh more.sh",
            &["t/more.sh", "deeper.sh", "t/deepest.sh"],
        ),
        // Followed four scripts deep, the fifth named but not read.
        (
            "sh deeper.sh",
            &[
                "deeper.sh",
                "deepest.sh",
                "too_deep.sh",
                "deeper2.sh",
                "deeper3.sh",
            ],
        ),
        // A Python script is not read as shell.
        ("python3 check.py", &["check.py"]),
        // A script is read where it is run from: from `t`, `check_mul.sh` is `t/check_mul.sh`.
        ("cd t && sh ../check_mul.sh", &["check_mul.sh", "t/lib.sh"]),
        ("sh missing.sh", &["missing.sh"]),
        // Beside the script, wherever it was run from; `$0` of the command itself is no file.
        (
            "cd t && sh driver.sh && sh \"$(dirname \"$0\")/x.sh\"",
            &["t/driver.sh", "t/check.sh", "t/lib.sh", "t/run.sh"],
        ),
    ];
    for (command, expected) in cases {
        assert_eq!(reached(command, files), expected, "{command}");
    }
}

#[test]
fn a_program_is_read_as_shell_by_its_first_line() {
    let files: &[(&str, &str)] = &[
        ("a", "#!/bin/bash\nsh b.sh\n"),
        ("c", "#!/usr/bin/python3\nsh d.sh\n"),
        ("e", "sh f.sh\n"),
    ];
    assert_eq!(reached("./a", files), ["a", "b.sh"]);
    assert_eq!(reached("./c", files), ["c"]);
    assert_eq!(reached("./e", files), ["e", "f.sh"]);
}

#[test]
fn make_reads_the_recipes_of_the_targets_asked_for() {
    let makefile = "CC = cc\n\
        all: build\n\
        build:\n\tcc -o calc calc.c\n\
        check: helper\n\t@sh tests/check.sh\n\t-cd t && $(MAKE) && sh t.sh\n\
        helper:\n\t+./tools/helper.sh $$HOME\n\
        .PHONY: check\n";
    let files: &[(&str, &str)] = &[
        ("Makefile", makefile),
        ("sub/GNUmakefile", "x:\n\tsh y.sh\n"),
    ];
    let cases: [(&str, &[&str]); 5] = [
        (
            "make check",
            &["Makefile", "tests/check.sh", "t/t.sh", "tools/helper.sh"],
        ),
        ("make", &["Makefile"]),
        ("make -C sub x", &["sub/GNUmakefile", "sub/y.sh"]),
        (
            "make -f Makefile -j 4 CC=gcc helper",
            &["Makefile", "tools/helper.sh"],
        ),
        ("make -C nowhere", &[]),
    ];
    for (command, expected) in cases {
        assert_eq!(reached(command, files), expected, "{command}");
    }
}

/// Any text, as a command, a script it reaches or a makefile, is read to an end without a
/// panic, and what is reached stays within the bounds: an agent chooses every byte of it.
#[test]
fn any_text_is_read_within_bounds() {
    use proptest::prelude::*;
    let word = prop_oneof![
        Just("cd".to_string()),
        Just("sh".to_string()),
        Just("bash -c".to_string()),
        Just("./x.sh".to_string()),
        Just("t/y.sh".to_string()),
        Just("&&".to_string()),
        Just(";".to_string()),
        Just("|".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just("$(".to_string()),
        Just("`".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("\\".to_string()),
        Just("<<EOF".to_string()),
        Just("EOF".to_string()),
        Just("\n".to_string()),
        Just("make -C".to_string()),
        Just("env -C".to_string()),
        Just("timeout 5".to_string()),
        Just(".".to_string()),
        Just("source".to_string()),
        Just("\"$(dirname \"$0\")\"".to_string()),
        Just("${0%/*}/".to_string()),
        Just("#".to_string()),
        Just("..".to_string()),
        Just("/".to_string()),
        Just("X=$(".to_string()),
        Just("all: x\n\tsh x.sh".to_string()),
        Just("é😀".to_string()),
        ".{0,6}",
    ];
    let text = prop::collection::vec(word, 0..24).prop_map(|words| words.join(" "));
    proptest!(ProptestConfig::with_cases(512), |(command in text.clone(), script in text)| {
        let reached = files_run(&command, |_| Ok::<_, ()>(Some(script.clone())))
            .expect("reading does not fail");
        prop_assert!(reached.len() <= MAX_FILES);
        let _ = names(&command, Some(""), None);
        let _ = names(&script, None, Some("t/y.sh"));
        let _ = recipes(&script, std::slice::from_ref(&command));
    });
}
