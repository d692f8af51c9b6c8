//! Generated code's side of [`Answer`]: a typed tool's `Answer<T>` return.

use super::output::{Output, OutputShape};
use crate::answer::Answer;
use crate::declare::ToolReply;

/// Generated code's wrapper for an `Answer<T>` return.
#[derive(Debug)]
pub struct Answered<P>(pub Answer<P>);

impl<P: Output> Output for Answered<P> {
    const ASKS_INPUT: bool = true;

    fn describe() -> OutputShape {
        P::describe()
    }

    fn into_outcome(self, shape: &OutputShape) -> ToolReply {
        match self.0 {
            Answer::Done(value) => value.into_outcome(shape),
            Answer::NeedsInput(needs) => Ok(Answer::NeedsInput(needs)),
        }
    }
}
