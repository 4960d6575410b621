//! The shape of one row of git's option tables: a letter, a long name, and what follows it.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    Nothing,
    Value,
    /// attached only: `-uno`, `--untracked-files=no`
    OptionalValue,
}

/// (short letter, long name without `--`, what it takes); `""` for a short-only option.
pub(super) type Opt = (Option<char>, &'static str, Takes);
