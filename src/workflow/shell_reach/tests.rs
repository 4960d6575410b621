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
        ("sh -s < check.sh", &["check.sh"]),
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

#[test]
fn a_script_a_shell_reads_on_its_standard_input_is_run_and_data_for_other_programs_is_not() {
    let cases: [(&str, &[&str]); 26] = [
        ("sh < t/check.sh", &["t/check.sh"]),
        (
            "sh - < t/check.sh && bash -- < c.sh",
            &["t/check.sh", "c.sh"],
        ),
        ("bash -s < t/check.sh", &["t/check.sh"]),
        ("sh -s arg --flag < t/check.sh", &["t/check.sh"]),
        ("sh -e <t/check.sh", &["t/check.sh"]),
        ("sh 0< t/check.sh", &["t/check.sh"]),
        ("< t/check.sh sh", &["t/check.sh"]),
        ("cd t && sh < check.sh", &["t/check.sh"]),
        (
            "cd t; bash -s -- x < ./check.sh 2>/dev/null",
            &["t/check.sh"],
        ),
        ("timeout 5 env X=1 sh < t/check.sh", &["t/check.sh"]),
        (
            "(cd t && sh < check.sh) && sh < c.sh",
            &["t/check.sh", "c.sh"],
        ),
        // Data, not a script: read by another program, or by the script a shell runs.
        ("grep -q x < t/data.txt", &[]),
        ("./t/filter.sh < t/data.txt", &["t/filter.sh"]),
        ("sh check.sh < t/data.txt", &["check.sh"]),
        ("sh -c 'cat' < t/data.txt", &[]),
        ("xargs sh < t/list.txt", &[]),
        ("sh 2< t/check.sh", &[]),
        ("sh <<< 'sh x.sh'", &[]),
        ("sh <> t/check.sh", &[]),
        ("sh < t/data.txt > out.sh", &["t/data.txt"]),
        ("sh < \"$F\" || sh < ~/c.sh || sh < /abs.sh", &[]),
        ("cd .. && sh < check.sh", &[]),
        // Fed by a pipe from `cat` of one file.
        ("cat t/check.sh | sh", &["t/check.sh"]),
        ("cd t && cat ./check.sh | bash -s -- x", &["t/check.sh"]),
        (
            "cat t/check.sh | sh x.sh && cat t/data.txt | grep x",
            &["x.sh"],
        ),
        ("cat a.sh b.sh | sh; cat -n a.sh | sh; cat a.sh; sh", &[]),
    ];
    for (command, expected) in cases {
        assert_eq!(reached(command, &[]), expected, "{command}");
    }
    // Read in turn, from where the shell ran (the root; `t` after the `cd`), in a script too.
    let files: &[(&str, &str)] = &[
        ("t/check.sh", "sh < lib.sh\n"),
        ("t/lib.sh", "./helper.sh\n"),
        ("run.sh", "cd t\nbash -s < check.sh\n"),
    ];
    assert_eq!(reached("sh < t/check.sh", files), ["t/check.sh", "lib.sh"]);
    assert_eq!(
        reached("sh run.sh", files),
        ["run.sh", "t/check.sh", "t/lib.sh", "t/helper.sh"]
    );
}

#[test]
fn a_variable_set_once_to_a_known_value_is_known_where_it_is_used_after() {
    let cases: [(&str, &[&str]); 17] = [
        ("D=t; sh \"$D/check.sh\"", &["t/check.sh"]),
        ("D=t && cd \"$D\" && sh check.sh", &["t/check.sh"]),
        ("D=t; sh ${D}/check.sh", &["t/check.sh"]),
        ("D=t\nsh $D/check.sh", &["t/check.sh"]),
        ("D=t &&\n  sh \"${D}\"/check.sh", &["t/check.sh"]),
        ("D='t' E=\"$D/sub\"; ./\"$E\"/c.sh", &["t/sub/c.sh"]),
        ("export D=t; sh < \"$D/check.sh\"", &["t/check.sh"]),
        ("D=t; cd \"$D\" && D2=.. && sh \"$D2/c.sh\"", &[]),
        ("X=check; cd t && sh \"$X.sh\"", &["t/check.sh"]),
        ("D=t; bash -c \"sh $D/check.sh\"", &["t/check.sh"]),
        (
            "D=t; if sh \"$D/a.sh\"; then sh b.sh; fi",
            &["t/a.sh", "b.sh"],
        ),
        ("D=t; f() { sh \"$D/a.sh\"; }; f", &["t/a.sh"]),
        ("D=t; for x in 1 2; do sh \"$D/a.sh\"; done", &["t/a.sh"]),
        ("SH=sh; $SH t/check.sh", &[]),
        ("D=\"t x\"; sh \"$D/a.sh\" && sh $D/b.sh", &["t x/a.sh"]),
        ("D=..; sh \"$D/a.sh\"; E=/tmp; sh \"$E/b.sh\"", &[]),
        ("D=t # a comment\nsh \"$D\"/a.sh", &["t/a.sh"]),
    ];
    for (command, expected) in cases {
        assert_eq!(reached(command, &[]), expected, "{command}");
    }
    // In a script the command runs; a script it runs in turn does not see them.
    let files: &[(&str, &str)] = &[
        (
            "run.sh",
            "#!/bin/sh\nset -e\nDIR=t\nsh \"$DIR/check.sh\"\nsh more.sh\n",
        ),
        ("more.sh", "sh \"$DIR/more.sh\"\n"),
        (
            "Makefile",
            "check:\n\tD=t; sh $$D/check.sh\n\tsh $$D/no.sh\n",
        ),
    ];
    assert_eq!(
        reached("sh run.sh", files),
        ["run.sh", "t/check.sh", "more.sh"]
    );
    assert_eq!(reached("make check", files), ["Makefile", "t/check.sh"]);
}

#[test]
fn a_variable_the_text_may_set_otherwise_or_not_at_all_stays_unknown() {
    let cases: [&str; 26] = [
        // From the environment, or set only later.
        "sh \"$D/check.sh\"",
        "sh \"$D/check.sh\"; D=t",
        // From what runs.
        "D=$(pwd)/t; sh \"$D/check.sh\"",
        "D=`echo t`; sh \"$D/check.sh\"",
        "D=~/t; sh \"$D/check.sh\"",
        "D=*; sh \"$D/check.sh\"",
        // Set again, in a branch, a loop, a function, a subshell, a pipe, after `&&` or `||`.
        "D=t; D=u; sh \"$D/check.sh\"",
        "D=t; if x; then D=u; fi; sh \"$D/check.sh\"",
        "D=t; while x; do D=u; done; sh \"$D/check.sh\"",
        "D=t; for D in u; do :; done; sh \"$D/check.sh\"",
        "D=t; f() { D=u; }; f; sh \"$D/check.sh\"",
        "(D=t); sh \"$D/check.sh\"",
        "{ D=t; }; sh \"$D/check.sh\"",
        "D=t | cat; sh \"$D/check.sh\"",
        "D=t & sh \"$D/check.sh\"",
        "x && D=t; sh \"$D/check.sh\"",
        "x || D=t; sh \"$D/check.sh\"",
        "case $1 in a) D=t;; esac; sh \"$D/check.sh\"",
        // Changed by what the reading does not follow.
        "D=t; read D; sh \"$D/check.sh\"",
        "D=t; eval \"$X\"; sh \"$D/check.sh\"",
        "D=t; : \"${D:=u}\"; sh \"$D/check.sh\"",
        "D=t; : $((D = 1)); sh \"$D/check.sh\"",
        "D=t; $CMD; sh \"$D/check.sh\"",
        "D=t; D+=u; sh \"$D/check.sh\"",
        "D=t sh \"$D/check.sh\"",
        "IFS=/; D=t; sh $D/check.sh",
    ];
    for command in cases {
        assert_eq!(reached(command, &[]), Vec::<String>::new(), "{command}");
    }
    // A sourced file may set it: only the sourced file is reached.
    assert_eq!(
        reached("D=t; . ./env.sh; sh \"$D/check.sh\"", &[]),
        ["env.sh"]
    );
    // Bounded: a value that doubles at each assignment is unknown past its bound.
    let mut doubling = String::from("D0=t\n");
    for i in 1..16 {
        doubling.push_str(&format!("D{i}=\"$D{}$D{}\"\n", i - 1, i - 1));
    }
    doubling.push_str("sh \"$D15/check.sh\"\nsh \"$D2/check.sh\"\n");
    assert_eq!(reached(&doubling, &[]), ["tttt/check.sh"]);
}

#[test]
fn a_package_manager_runs_the_package_json_scripts_named() {
    let package = r#"{"scripts": {"pretest": "sh t/pre.sh", "test": "sh t/check.sh && npm run lint",
        "posttest": "./t/post.sh", "lint": "sh t/lint.sh", "build": "cd t && sh build.sh",
        "loop": "npm run loop", "install": "sh t/install.sh"}}"#;
    let files: &[(&str, &str)] = &[
        ("package.json", package),
        (
            "web/package.json",
            r#"{"scripts": {"test": "sh check.sh"}}"#,
        ),
        ("bad/package.json", "{\"scripts\": "),
    ];
    let npm_test: &[&str] = &["t/pre.sh", "t/check.sh", "t/post.sh", "t/lint.sh"];
    let cases: [(&str, &[&str]); 35] = [
        ("npm test", npm_test),
        ("npm t", npm_test),
        ("npm tst -- --verbose", npm_test),
        ("npm -s test", npm_test),
        ("npm run test", npm_test),
        ("npm run-script build", &["t/build.sh"]),
        ("npm run build --if-present", &["t/build.sh"]),
        ("yarn build", &["t/build.sh"]),
        ("yarn run build", &["t/build.sh"]),
        // yarn classic and pnpm run `preNAME` and `postNAME` as npm does.
        ("yarn test", npm_test),
        ("pnpm build", &["t/build.sh"]),
        ("pnpm run build", &["t/build.sh"]),
        ("pnpm test", npm_test),
        ("pnpm run test", npm_test),
        // The names yarn 1 and pnpm 12 install beside their own.
        ("yarnpkg test", npm_test),
        ("pn run build", &["t/build.sh"]),
        ("cd web && npm test", &["web/check.sh"]),
        ("cd web/src && yarn test", &["web/check.sh"]),
        ("cd lib && pnpm run build", &["t/build.sh"]),
        ("npm --prefix web test", &["web/check.sh"]),
        ("yarn --cwd=web test", &["web/check.sh"]),
        ("pnpm -C web test", &["web/check.sh"]),
        // yarn walks up from its `--cwd` as from its own directory; pnpm's `-C` does not.
        ("yarn --cwd web/src test", &["web/check.sh"]),
        ("yarn --cwd t test", npm_test),
        ("pnpm -C t test", &[]),
        ("npm run loop", &[]),
        // No script, a package manager's own command, one not known, no package.json.
        ("npm run nope", &[]),
        ("npm install && yarn install && pnpm install && yarn", &[]),
        (
            "npm run \"$X\" && npm test --workspace a && pnpm -r test",
            &[],
        ),
        ("npm run build -w a && yarn test --filter=a", &[]),
        ("yarn workspaces run test && pnpm why x", &[]),
        ("npm --prefix /tmp test && npm --prefix .. test", &[]),
        ("cd bad && npm test", &[]),
        ("cd /tmp && npm test", &[]),
        ("cd .. && npm test", &[]),
    ];
    for (command, expected) in cases {
        assert_eq!(reached(command, files), expected, "{command}");
    }
    assert_eq!(reached("npm test", &[]), Vec::<String>::new());
}

/// The `package.json` scripts a command's package manager runs are named with the file that
/// holds them (present or not: `pretest` and `posttest` where npm would run them), in the
/// order run, followed through a script that runs another, each once; a file that does not
/// parse names the scripts asked for, none of which runs.
#[test]
fn the_package_scripts_a_command_runs_are_named_with_their_file() {
    let files: &[(&str, &str)] = &[
        (
            "package.json",
            r#"{"scripts": {"test": "sh t/check.sh && npm run lint", "lint": "npm run lint"}}"#,
        ),
        (
            "web/package.json",
            r#"{"scripts": {"test": "sh check.sh"}}"#,
        ),
        ("bad/package.json", "{\"scripts\": "),
    ];
    let scripts = |command: &str| -> Vec<(String, String)> {
        let tree: BTreeMap<&str, &str> = files.iter().copied().collect();
        reach(command, |path| {
            Ok::<_, ()>(tree.get(path).map(|t| (*t).to_string()))
        })
        .expect("reading a map does not fail")
        .scripts
        .into_iter()
        .map(|s| (s.package, s.name))
        .collect()
    };
    let of = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(p, n)| ((*p).to_string(), (*n).to_string()))
            .collect()
    };
    let root = "package.json";
    assert_eq!(
        scripts("npm test"),
        of(&[
            (root, "pretest"),
            (root, "test"),
            (root, "posttest"),
            (root, "prelint"),
            (root, "lint"),
            (root, "postlint"),
        ])
    );
    assert_eq!(
        scripts("yarn test"),
        of(&[
            (root, "pretest"),
            (root, "test"),
            (root, "posttest"),
            (root, "prelint"),
            (root, "lint"),
            (root, "postlint")
        ])
    );
    assert_eq!(
        scripts("cd web && pnpm test && sh x.sh"),
        of(&[
            ("web/package.json", "pretest"),
            ("web/package.json", "test"),
            ("web/package.json", "posttest")
        ])
    );
    assert_eq!(
        scripts("cd bad && yarn test"),
        of(&[
            ("bad/package.json", "pretest"),
            ("bad/package.json", "test"),
            ("bad/package.json", "posttest")
        ])
    );
    assert_eq!(scripts("sh t/check.sh && npm install"), of(&[]));
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
        Just("<".to_string()),
        Just("sh -s <".to_string()),
        Just("D=t".to_string()),
        Just("\"$D/".to_string()),
        Just("${D}".to_string()),
        Just("export".to_string()),
        Just("npm test".to_string()),
        Just("cat x.sh |".to_string()),
        Just("yarn run".to_string()),
        Just("pnpm -C".to_string()),
        Just(r#"{"scripts":{"test":"sh x.sh","pretest":"npm test"}}"#.to_string()),
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
