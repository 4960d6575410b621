//! The shell reader's own tests: each case of the language it reads, compared whole.

use super::*;
use pretty_assertions::assert_eq;

/// Each simple command's assignments and words, as their texts.
fn words(line: &str) -> Vec<Vec<String>> {
    parse(line)
        .unwrap()
        .into_iter()
        .map(|s| {
            s.assignments
                .iter()
                .chain(&s.words)
                .map(Word::text)
                .collect()
        })
        .collect()
}

fn w(list: &[&[&str]]) -> Vec<Vec<String>> {
    list.iter()
        .map(|l| l.iter().map(|s| s.to_string()).collect())
        .collect()
}

#[test]
fn separators_split_simple_commands() {
    assert_eq!(
        words("a 1 && b 2 || c; d | e & f\ng"),
        w(&[
            &["a", "1"],
            &["b", "2"],
            &["c"],
            &["d"],
            &["e"],
            &["f"],
            &["g"]
        ])
    );
    assert_eq!(
        words("(cd x; git commit -n)"),
        w(&[&["cd", "x"], &["git", "commit", "-n"]])
    );
}

#[test]
fn quotes_are_removed_and_keep_operators_inside() {
    assert_eq!(
        words(r#"echo 'a && b' "c; d" e\ f $'g\nh'"#),
        w(&[&["echo", "a && b", "c; d", "e f", "g\nh"]])
    );
    assert_eq!(words("git com\"mit\" -n"), w(&[&["git", "commit", "-n"]]));
}

#[test]
fn words_know_what_they_cannot_know() {
    let parsed =
        parse(r#"x "$y" '$z' ${HOME} ${a:-b} $(pwd) `id` ~/f *.rs '*.rs' \*.rs {a,b} @{u} "#)
            .unwrap();
    let literal: Vec<Option<String>> = parsed[2].words.iter().map(Word::literal).collect();
    let s = |t: &str| Some(t.to_string());
    assert_eq!(
        literal,
        vec![
            s("x"),
            None,
            s("$z"),
            None,
            None,
            None,
            None,
            None,
            None,
            s("*.rs"),
            s("*.rs"),
            None,
            s("@{u}")
        ]
    );
    assert_eq!(
        parsed[2].words[1].parts,
        vec![Part::Param {
            name: "y".into(),
            quoted: true
        }]
    );
    assert_eq!(parsed[2].words[7].parts[0], Part::Tilde(String::new()));
    assert_eq!(
        parsed[2].words[11].parts,
        vec![Part::Opaque {
            text: "{a,b}".into()
        }]
    );
    // The substitutions' commands run before the command that holds them.
    assert_eq!(parsed[0].texts(), ["pwd"]);
    assert_eq!(parsed[1].texts(), ["id"]);
}

#[test]
fn substitutions_are_commands_that_run_first() {
    assert_eq!(
        words("echo $(git update-ref refs/orchestrator/x HEAD) `rm -f y`"),
        w(&[
            &["git", "update-ref", "refs/orchestrator/x", "HEAD"],
            &["rm", "-f", "y"],
            &[
                "echo",
                "$(git update-ref refs/orchestrator/x HEAD)",
                "$(rm -f y)"
            ],
        ])
    );
    assert_eq!(
        words("x=\"$(a \"b c\")\"; echo $((1+2))"),
        w(&[&["a", "b c"], &["x=$(a \"b c\")"], &["echo", "$((1+2))"]])
    );
}

#[test]
fn redirections_are_kept_apart() {
    let parsed = parse("echo hi > .git/hooks/pre-commit 2>&1 >>log; cat <in").unwrap();
    assert_eq!(parsed[0].texts(), ["echo", "hi"]);
    let writes: Vec<String> = parsed[0].writes.iter().map(Word::text).collect();
    assert_eq!(writes, [".git/hooks/pre-commit", "log"]);
    assert_eq!(parsed[1].texts(), ["cat"]);
    assert!(parsed[1].writes.is_empty());
    assert_eq!(parse("a &>out").unwrap()[0].writes[0].text(), "out");
    assert_eq!(parse("echo x >& f 2>&1 >&-").unwrap()[0].writes.len(), 1);
}

#[test]
fn here_documents_are_stdin_not_commands() {
    let parsed = parse("sh <<'EOF'\ngit commit -n\nEOF\necho done").unwrap();
    assert_eq!(parsed.len(), 2);
    assert_eq!(parsed[0].texts(), ["sh"]);
    assert_eq!(
        parsed[0].stdin,
        Some(Stdin::Text {
            text: "git commit -n\n".into(),
            expands: false
        })
    );
    assert_eq!(parsed[1].texts(), ["echo", "done"]);
}

#[test]
fn ansi_c_quotes_are_decoded_as_bash_decodes_them() {
    assert_eq!(
        words(r"git commit $'\x2dn' $'\055n' $'\u002dn' $'a\'b'"),
        w(&[&["git", "commit", "-n", "-n", "-n", "a'b"]])
    );
}

#[test]
fn process_substitutions_and_here_strings_are_read() {
    assert_eq!(
        words("diff <(sort a) >(tee b)"),
        w(&[
            &["sort", "a"],
            &["tee", "b"],
            &["diff", "<(sort a)", ">(tee b)"]
        ])
    );
    let parsed = parse("bash <<< 'git commit -n'").unwrap();
    assert_eq!(
        parsed[0].stdin,
        Some(Stdin::Text {
            text: "git commit -n".into(),
            expands: false
        })
    );
}

#[test]
fn an_unquoted_here_document_runs_its_substitutions() {
    assert_eq!(
        words("cat <<EOF\nx \"$(git commit -n)\" `rm y` \\$(not run)\nEOF"),
        w(&[&["git", "commit", "-n"], &["rm", "y"], &["cat"]])
    );
    assert_eq!(words("cat <<'EOF'\n$(git commit -n)\nEOF"), w(&[&["cat"]]));
}

#[test]
fn a_here_document_inside_a_substitution_is_its_text() {
    let line = "git commit -m \"$(cat <<'EOF'\nfix: don't crash (\"really\")\nEOF\n)\"";
    let parsed = parse(line).unwrap();
    assert_eq!(parsed[0].texts(), ["cat"]);
    assert_eq!(
        parsed[0].stdin,
        Some(Stdin::Text {
            text: "fix: don't crash (\"really\")\n".into(),
            expands: false
        })
    );
    assert_eq!(parsed[1].texts()[..2], ["git", "commit"]);
    // A `)` in the body does not end the substitution early.
    let hidden = "x=\"$(cat <<'EOF'\n)\nEOF\ngit commit -n -m x\n)\"";
    assert!(
        words(hidden).contains(&w(&[&["git", "commit", "-n", "-m", "x"]])[0]),
        "{:?}",
        words(hidden)
    );
}

#[test]
fn assignments_come_before_the_program() {
    let parsed = parse("GIT_ORCHESTRATE_HUMAN=1 A=b git x=y").unwrap();
    let assigned: Vec<(String, bool, String)> = parsed[0]
        .assignments
        .iter()
        .filter_map(Word::assignment)
        .map(|(n, a, v)| (n, a, v.text()))
        .collect();
    assert_eq!(
        assigned,
        [
            ("GIT_ORCHESTRATE_HUMAN".to_string(), false, "1".to_string()),
            ("A".into(), false, "b".into())
        ]
    );
    assert_eq!(parsed[0].texts(), ["git", "x=y"]);
    assert_eq!(
        words("arr=(a b c); echo ok"),
        w(&[&["arr=(a b c)"], &["echo", "ok"]])
    );
}

#[test]
fn compound_commands_run_their_bodies() {
    assert_eq!(
        words("for f in .git/hooks/*; do rm \"$f\"; done"),
        w(&[&["for", "f", "in", ".git/hooks/*"], &["rm", "$f"]])
    );
    assert_eq!(
        words("if true; then git commit -n; else :; fi"),
        w(&[&["true"], &["git", "commit", "-n"], &[":"]])
    );
    assert_eq!(
        words("case $x in a|b) rm y;; *) echo z;; esac; ls"),
        w(&[&["case", "$x", "in"], &["rm", "y"], &["echo", "z"], &["ls"]])
    );
    assert_eq!(
        words("f() { git commit -n; }; f"),
        w(&[&["git", "commit", "-n"], &["f"]])
    );
    assert_eq!(words("((i++)); echo $i"), w(&[&["echo", "$i"]]));
    let parsed = parse("x=1; if a; then y=2; fi; (z=3)").unwrap();
    let nested: Vec<bool> = parsed.iter().map(|s| s.nested).collect();
    assert_eq!(nested, [false, true, true, true]);
}

#[test]
fn a_pipe_names_what_the_command_reads() {
    let parsed = parse("echo 'git commit -n' | sh; base64 -d x | bash; done | sh").unwrap();
    let producer = |i: usize| match &parsed[i].stdin {
        Some(Stdin::Pipe(p)) => Some(p.texts()),
        _ => None,
    };
    assert_eq!(
        producer(1),
        Some(vec!["echo".into(), "git commit -n".into()])
    );
    assert_eq!(
        producer(3),
        Some(vec!["base64".into(), "-d".into(), "x".into()])
    );
    assert_eq!(parsed[4].stdin, Some(Stdin::Compound));
    assert_eq!(parsed[1].joint, Joint::Pipe);
}

#[test]
fn unclosed_quotes_are_unreadable() {
    assert!(parse("echo 'x").is_err());
    assert!(parse("echo $(x").is_err());
    assert!(parse("echo `x").is_err());
    assert!(parse("echo ${x").is_err());
    let deep = "$(".repeat(40) + &")".repeat(40);
    assert!(parse(&deep).is_err());
    let wide = "true;".repeat(MAX_UNITS + 1);
    assert!(parse(&wide).is_err_and(|e| e.too_much));
}

/// What the differential test against brush-parser and bash found, minimised.
#[test]
fn the_differential_tests_findings_are_read_as_bash_reads_them() {
    // A `case` pattern's `)` inside `$(…)`: refused, not misread.
    assert!(parse("echo \"$(case a in a) rm -rf x ;; esac)\"").is_err());
    assert!(parse("echo $(case a in a) rm -rf x ;; esac)").is_err());
    // A bracket closed after quoted text is a glob; `[` alone, or a quoted `]`, is not.
    assert_eq!(parse(r#"a .gi[t"x"]"#).unwrap()[0].words[1].literal(), None);
    assert_eq!(words(r#"[ x .gi[t"]" "#), w(&[&["[", "x", ".gi[t]"]]));
    // bash ends a `$'…'` value at a NUL, however it is written.
    assert_eq!(
        words(r"git push $'HEAD:main\x00x' $'a\0b'c $'p\u0000q' $'x\c@y' $'z\400w'"),
        w(&[&["git", "push", "HEAD:main", "ac", "p", "x", "z"]])
    );
    // An octal escape keeps its low eight bits, as bash does: `$'\547it'` is `git`.
    assert_eq!(words(r"$'\547it' $'\700'"), w(&[&["git", "\u{c0}"]]));
    // bash keeps the backslash of an escape it does not know.
    assert_eq!(
        words(r"x $'\q' $'\-n' $'\x' $'\xg' $'\cA' $'\''"),
        w(&[&["x", "\\q", "\\-n", "\\x", "\\xg", "\u{1}", "'"]])
    );
    // A here-string and `$'…'` inside a substitution.
    assert_eq!(
        words("echo $(a <<< ')')"),
        w(&[&["a"], &["echo", "$(a <<< ')')"]])
    );
    assert_eq!(
        words(r"echo $(a $'\'')"),
        w(&[&["a", "'"], &["echo", r"$(a $'\'')"]])
    );
    // `${x:-a b}` is one word.
    assert_eq!(words("echo ${x:-a b}"), w(&[&["echo", "${x:-a b}"]]));
    // A quoted `NAME=` is a word, the program.
    let parsed = parse("\"A=b\" git").unwrap();
    assert!(parsed[0].assignments.is_empty());
    assert_eq!(parsed[0].texts(), ["A=b", "git"]);
    // A quoted keyword is a word.
    assert_eq!(words("'if' x"), w(&[&["if", "x"]]));
    // After `((`, bash reads arithmetic first, where `#` is no comment: a quote left open
    // there is an error, although a command would have commented it out.
    assert!(parse(">((git #'\n git))").is_err());
    assert!(parse("cat <((git #x\n git))").is_ok());
    // An escaped `$` in double quotes inside `$(…)` opens no substitution.
    assert_eq!(
        words(r#"echo $(a "\$(" b)"#),
        w(&[&["a", "$(", "b"], &["echo", r#"$(a "\$(" b)"#]])
    );
    assert_eq!(
        words(r#"echo "$(a "\\" "\"(")""#),
        w(&[&["a", "\\", "\"("], &["echo", r#"$(a "\\" "\"(")"#]])
    );
}

#[test]
fn a_functions_name_is_no_command() {
    assert_eq!(words("f() { git; }; f"), w(&[&["git"], &["f"]]));
    assert_eq!(words("f () (git)"), w(&[&["git"]]));
    assert_eq!(words("function f { git; }"), w(&[&["git"]]));
    assert_eq!(words("function f() { git; }"), w(&[&["git"]]));
}

#[test]
fn a_process_substitution_that_opens_a_subshell_runs_its_commands() {
    assert_eq!(
        words("cat >((rm -f x) ; git)"),
        w(&[&["rm", "-f", "x"], &["git"], &["cat", ">((rm -f x) ; git)"]])
    );
}
