//! How the enums, ids and row structs are stored, the same on both backends (server only): an
//! enum as one of its names in a TEXT column, an id newtype as its integer. Written against
//! `sqlx-core` by macro, not with sqlx's derives: those implement each driver but not `Any`, and
//! needing the `sqlx` facade would have `domain` wait for SQLite's C library to compile.

use crate::ids;
use crate::wire::{queue::GridJobRow, tasks::QualityRow, tasks::ShotGroup};
use sqlx_core::any::{Any, AnyRow, AnyTypeInfo, AnyValueRef};
use sqlx_core::database::Database;
use sqlx_core::decode::Decode;
use sqlx_core::encode::{Encode, IsNull};
use sqlx_core::error::BoxDynError;
use sqlx_core::from_row::FromRow;
use sqlx_core::row::Row;
use sqlx_core::types::Type;

/// A Rust type stored as a column of another (`$repr` for its type, `$stored` read and
/// written): `|me| to` gives the stored value, `|raw| from` makes the type from it.
macro_rules! any_column {
    ($t:ty, $repr:ty, $stored:ty, |$me:ident| $to:expr, |$raw:ident| $from:expr) => {
        impl Type<Any> for $t {
            fn type_info() -> AnyTypeInfo {
                <$repr as Type<Any>>::type_info()
            }
            fn compatible(ty: &AnyTypeInfo) -> bool {
                <$repr as Type<Any>>::compatible(ty)
            }
        }
        impl<'q> Encode<'q, Any> for $t {
            fn encode_by_ref(
                &self,
                buf: &mut <Any as Database>::ArgumentBuffer<'q>,
            ) -> Result<IsNull, BoxDynError> {
                let $me = self;
                <$stored as Encode<'q, Any>>::encode($to, buf)
            }
        }
        impl<'r> Decode<'r, Any> for $t {
            fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
                let $raw = <$stored as Decode<'r, Any>>::decode(value)?;
                $from
            }
        }
    };
}

/// A Rust enum kept as one of its names in a TEXT column, read and written as that text on
/// both backends: sqlx's `#[derive(Type)]` implements each driver but not `Any`. A stored name
/// the enum does not know is a decoding error that names it (the schema's CHECKs prevent one).
macro_rules! text_column {
    ($t:ty, $what:literal) => {
        any_column!($t, str, &str, |v| v.as_str(), |s| {
            <$t>::parse(s).ok_or_else(|| format!("{s:?} is not a {}", $what).into())
        });
    };
}

/// An id newtype kept as the integer it wraps.
macro_rules! id_column {
    ($($t:ty),+) => {
        $(any_column!($t, i64, i64, |v| v.0, |n| Ok(Self(n)));)+
    };
}

id_column!(
    ids::StudyId,
    ids::UserId,
    ids::AssignmentId,
    ids::TaskId,
    ids::ConfigId,
    ids::ExampleId,
    ids::RunId
);

text_column!(crate::people::Role, "role");
text_column!(crate::place::PlaceStatus, "place status");
text_column!(crate::place::Phase, "phase");
text_column!(crate::task::NoAnswer, "no-answer encoding");
text_column!(crate::run::RunStatus, "run status");
text_column!(crate::platform::Platform, "crowd platform");
text_column!(crate::platform::ledger::Action, "platform action");
text_column!(
    crate::platform::ledger::ActionState,
    "platform action state"
);
text_column!(crate::platform::ledger::RemoteStatus, "submission status");
text_column!(crate::platform::plan::Decision, "decision");
text_column!(crate::platform::plan::Rule, "rejection rule");
text_column!(crate::run::JobStatus, "grid job status");
text_column!(crate::run::SystemKind, "system kind");

/// A struct read from a query's row, a field from the column of its name (or the one given):
/// what sqlx's `FromRow` derive writes, for the rows the store reads through `Any`.
macro_rules! any_row {
    ($t:ident { $($field:ident $(= $column:literal)?),+ $(,)? }) => {
        impl<'r> FromRow<'r, AnyRow> for $t {
            fn from_row(row: &'r AnyRow) -> Result<Self, sqlx_core::Error> {
                Ok(Self { $($field: row.try_get(any_row!(@column $field $($column)?))?),+ })
            }
        }
    };
    (@column $field:ident) => { stringify!($field) };
    (@column $field:ident $column:literal) => { $column };
}

any_row!(GridJobRow {
    id,
    system,
    task,
    k,
    split,
    status,
    worker,
    attempts,
    error,
});
any_row!(ShotGroup { k, split, rows = "n_rows", file_name });
any_row!(QualityRow {
    file_name,
    line_no,
    kind,
    detail
});
