//! How a job stopped by a signal ends: the error `windowctl` exits with (128 + the signal) and
//! what its message says a rerun resumes from.

/// The job was stopped by a signal (SIGINT, SIGTERM) at a batch boundary, its outputs flushed
/// (and, with `--checkpoint-dir`, a last checkpoint taken); the process exits with 128 + the
/// signal's number, as a shell reports a signal.
#[derive(Debug)]
pub(crate) struct Stopped {
    /// The signal's number.
    pub(crate) signal: i32,
    /// What a rerun resumes from.
    pub(crate) checkpointed: AtStop,
}

/// What a job stopped by a signal leaves to resume from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtStop {
    /// No checkpoints: a rerun starts over.
    Nothing,
    /// A last checkpoint where it stopped.
    Checkpoint,
    /// The last periodic checkpoint (none is taken at a stop with several processes or
    /// several inputs under `--workers`).
    LastPeriodic,
    /// A process other than 0 of a cluster: process 0 writes the output and the checkpoints.
    Peer,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self.signal {
            signal_hook::consts::SIGINT => "SIGINT",
            _ => "SIGTERM",
        };
        if self.checkpointed == AtStop::Peer {
            return write!(
                f,
                "stopped by {name} at a chunk boundary; process 0 writes the output, complete \
                 up to where the cluster stopped"
            );
        }
        write!(
            f,
            "stopped by {name} at a batch boundary; outputs are complete up to there"
        )?;
        match self.checkpointed {
            AtStop::Checkpoint => write!(f, " and checkpointed: run the same command to resume"),
            AtStop::LastPeriodic => write!(
                f,
                "; no checkpoint is taken at a stop of several processes or inputs: run the \
                 same command to resume from the last periodic checkpoint"
            ),
            AtStop::Nothing | AtStop::Peer => Ok(()),
        }
    }
}

impl std::error::Error for Stopped {}

impl AtStop {
    /// [`AtStop::Checkpoint`] with checkpoints, else [`AtStop::Nothing`].
    pub(crate) fn checkpoint_if(checkpoints: bool) -> Self {
        if checkpoints {
            AtStop::Checkpoint
        } else {
            AtStop::Nothing
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn says(checkpointed: AtStop) -> String {
        Stopped {
            signal: signal_hook::consts::SIGTERM,
            checkpointed,
        }
        .to_string()
    }

    #[test]
    fn the_message_says_what_a_rerun_resumes_from() {
        let plain = "stopped by SIGTERM at a batch boundary; outputs are complete up to there";
        assert_eq!(says(AtStop::Nothing), plain);
        assert_eq!(
            says(AtStop::Checkpoint),
            format!("{plain} and checkpointed: run the same command to resume")
        );
        let periodic = says(AtStop::LastPeriodic);
        assert!(
            periodic.starts_with(plain) && periodic.contains("no checkpoint is taken at a stop")
        );
        assert!(!periodic.contains("and checkpointed"), "{periodic}");
        let peer = says(AtStop::Peer);
        assert!(peer.contains("process 0 writes the output"), "{peer}");
        assert!(!peer.contains("outputs are complete"), "{peer}");
    }
}
