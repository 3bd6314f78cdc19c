//! The request: what the operation asks for, compared field by field when a key comes back.

use std::sync::Arc;

use crate::{Error, MAX_JOB_BYTES, RequestProblem};

/// A validated request: a job name and a positive number of units to reserve.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    /// Shared, not copied: the ledger keeps the request of every record it writes, and a
    /// clone is then a count, not an allocation.
    job: Arc<str>,
    units: u64,
}

impl Request {
    /// Validates a job name and a unit count.
    ///
    /// ```
    /// use retrykey::{Error, Request, RequestProblem};
    ///
    /// assert!(Request::new("convert-document", 7).is_ok());
    /// assert_eq!(
    ///     Request::new("convert-document", 0),
    ///     Err(Error::InvalidRequest(RequestProblem::ZeroUnits))
    /// );
    /// ```
    pub fn new(job: impl Into<String>, units: u64) -> Result<Self, Error> {
        let job = job.into();
        if job.is_empty() {
            return Err(Error::InvalidRequest(RequestProblem::EmptyJob));
        }
        if job.len() > MAX_JOB_BYTES {
            return Err(Error::InvalidRequest(RequestProblem::JobTooLong {
                bytes: job.len(),
            }));
        }
        if job.chars().any(char::is_control) {
            return Err(Error::InvalidRequest(RequestProblem::JobControlCharacter));
        }
        if units == 0 {
            return Err(Error::InvalidRequest(RequestProblem::ZeroUnits));
        }
        Ok(Self {
            job: job.into(),
            units,
        })
    }

    /// Validates a request whose unit count arrives as text (a form field, a CLI flag).
    ///
    /// Zero, negative, non-numeric and overflowing counts are each rejected with their own
    /// [`RequestProblem`].
    ///
    /// ```
    /// use retrykey::{Error, Request, RequestProblem};
    ///
    /// assert_eq!(Request::parse("convert-document", "7")?.units(), 7);
    /// assert_eq!(
    ///     Request::parse("convert-document", "-7"),
    ///     Err(Error::InvalidRequest(RequestProblem::NegativeUnits))
    /// );
    /// # Ok::<(), Error>(())
    /// ```
    pub fn parse(job: impl Into<String>, units: &str) -> Result<Self, Error> {
        Self::new(job, parse_units(units)?)
    }

    /// The job name.
    pub fn job(&self) -> &str {
        &self.job
    }

    /// The number of units the operation reserves.
    pub fn units(&self) -> u64 {
        self.units
    }
}

/// Parses a unit count, naming the way in which a bad one is wrong.
fn parse_units(text: &str) -> Result<u64, Error> {
    let digits = text.trim();
    let problem = if digits.is_empty() {
        RequestProblem::NotANumber
    } else if let Some(rest) = digits.strip_prefix('-') {
        if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
            RequestProblem::NegativeUnits
        } else {
            RequestProblem::NotANumber
        }
    } else if !digits.bytes().all(|b| b.is_ascii_digit()) {
        RequestProblem::NotANumber
    } else {
        return digits
            .parse()
            .map_err(|_| Error::InvalidRequest(RequestProblem::UnitsOverflow));
    };
    Err(Error::InvalidRequest(problem))
}
