//! The correct pieces as one: [`StandardSteps`] runs the executor's loop, and takes every other
//! piece from the defaults of [`RetrySteps`].

use std::future::Future;

use retrykey::Key;

use crate::{Attempt, Budget, Client, Failure, Outcome, RetrySteps, StandardSteps, Success};

impl RetrySteps for StandardSteps {
    /// The correct loop: [`crate::executor::execute`].
    fn execute<'a, T, F, Fut>(
        client: &'a Client<Self>,
        key: Option<Key>,
        parent: Option<Budget>,
        attempt: F,
    ) -> impl Future<Output = Outcome<T>> + Send + 'a
    where
        T: Send + 'a,
        F: FnMut(Attempt) -> Fut + Send + 'a,
        Fut: Future<Output = Result<Success<T>, Failure>> + Send + 'a,
    {
        crate::executor::execute(client, key, parent, attempt)
    }
}
