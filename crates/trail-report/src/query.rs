//! Building filtered queries with bound values only.

/// A condition on a `messages` row aliased `m` of kind `prompt`: a person wrote it (typed, or
/// queued while the agent worked), or its format does not say who did. Prompts the agent or a
/// hook sent (`system`) and prompts a program sent (`sdk`) are left out of what reports count
/// as asked (issue 18).
pub(crate) const PERSON_PROMPT: &str = "coalesce(m.prompt_source, 'typed') IN ('typed', 'queued')";

/// A condition on a `turns` row aliased `t`: its prompt was written by a person (see
/// [`PERSON_PROMPT`]).
pub(crate) const PERSON_TURN: &str = "NOT EXISTS (SELECT 1 FROM messages m
    WHERE m.session_id = t.session_id AND m.turn_index = t.turn_index AND m.kind = 'prompt'
      AND m.on_main_chain = 1 AND m.prompt_source IN ('system', 'sdk'))";

pub(crate) use trail_store::filter::Where;
