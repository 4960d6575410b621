//! `init`: writes `.orchestrate.toml` when there is none (never overwriting one) and creates
//! the workflow in INITIALIZING. Running it again changes nothing.

use std::io::Write as _;
use std::path::PathBuf;

use super::{EngineError, Session, io_error};
use crate::config::{self, Config, Origin};
use crate::store::is_valid_branch_name;
use crate::workflow::{Rejection, RejectionKind, State, Status};

pub struct InitReport {
    pub workflow: String,
    pub reference: String,
    pub main_branch: String,
    pub config_path: PathBuf,
    pub config_written: bool,
    /// Set when flags were given but an existing file was kept.
    pub config_note: Option<String>,
    pub created: bool,
    pub state: State,
    pub warnings: Vec<String>,
}

pub fn init(
    session: &Session,
    main_branch: Option<&str>,
    preflight: Option<&str>,
) -> Result<InitReport, EngineError> {
    if let Some(main) = main_branch.filter(|m| !is_valid_branch_name(m)) {
        return Err(EngineError::Rejected(Rejection {
            kind: RejectionKind::InvalidInput,
            state: Status::Initializing,
            message: format!("--main-branch \"{main}\" is not a valid branch name"),
            hint: "Pass the name of the branch PRs start from and merge into, e.g. --main-branch main.".into(),
        }));
    }
    let path = session.store.workdir().join(config::FILE_NAME);
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_error(format!("read {}", path.display()))(e)),
    };
    let snapshot = session.store.read()?;
    let (config_written, config_note) = match existing {
        Some(text) => {
            Config::parse(&text, &Origin::WorkingTree)?;
            let ignored: Vec<&str> = [
                main_branch.map(|_| "--main-branch"),
                preflight.map(|_| "--preflight"),
            ]
            .into_iter()
            .flatten()
            .collect();
            let note = (!ignored.is_empty()).then(|| {
                format!(
                    "kept the existing {}; {} not applied (edit the file instead)",
                    config::FILE_NAME,
                    ignored.join(" and ")
                )
            });
            (false, note)
        }
        None => {
            let main = match main_branch {
                Some(main) => main.to_string(),
                None => session.main_branch(snapshot.as_ref().map(|s| &s.state))?,
            };
            let text = config::initial_file(&main, preflight);
            // create_new: a file that appeared since the read above is never overwritten.
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(io_error(format!("create {}", path.display())))?;
            file.write_all(text.as_bytes())
                .map_err(io_error(format!("write {}", path.display())))?;
            (true, None)
        }
    };
    let created = snapshot.is_none();
    let snapshot = match snapshot {
        Some(s) => s,
        None => session.with_retries(|| session.read_or_create())?,
    };
    let mut warnings = session.load_config(Some(&snapshot.state))?.warnings;
    let main = session.main_branch(Some(&snapshot.state))?;
    if let Some(asked) = main_branch.filter(|m| *m != main) {
        warnings.push(format!(
            "workflow {} already uses {main} as its main branch; --main-branch {asked} does not change that",
            session.store.workflow()
        ));
    }
    Ok(InitReport {
        workflow: session.store.workflow().to_string(),
        reference: session.store.ref_name(),
        main_branch: main,
        config_path: path,
        config_written,
        config_note,
        created,
        state: snapshot.state,
        warnings,
    })
}
