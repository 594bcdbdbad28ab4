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

/// A Rust enum kept as one of its names in a TEXT column, read and written as that text on
/// both backends: sqlx's `#[derive(Type)]` implements each driver but not `Any`. A stored name
/// the enum does not know is a decoding error that names it (the schema's CHECKs prevent one).
macro_rules! text_column {
    ($t:ty, $what:literal) => {
        impl Type<Any> for $t {
            fn type_info() -> AnyTypeInfo {
                <str as Type<Any>>::type_info()
            }
            fn compatible(ty: &AnyTypeInfo) -> bool {
                <str as Type<Any>>::compatible(ty)
            }
        }
        impl<'q> Encode<'q, Any> for $t {
            fn encode_by_ref(
                &self,
                buf: &mut <Any as Database>::ArgumentBuffer<'q>,
            ) -> Result<IsNull, BoxDynError> {
                <&str as Encode<'q, Any>>::encode(self.as_str(), buf)
            }
        }
        impl<'r> Decode<'r, Any> for $t {
            fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
                let s = <&str as Decode<'r, Any>>::decode(value)?;
                <$t>::parse(s).ok_or_else(|| format!("{s:?} is not a {}", $what).into())
            }
        }
    };
}

/// An id newtype kept as the integer it wraps.
macro_rules! id_column {
    ($($t:ty),+) => {
        $(
            impl Type<Any> for $t {
                fn type_info() -> AnyTypeInfo {
                    <i64 as Type<Any>>::type_info()
                }
                fn compatible(ty: &AnyTypeInfo) -> bool {
                    <i64 as Type<Any>>::compatible(ty)
                }
            }
            impl<'q> Encode<'q, Any> for $t {
                fn encode_by_ref(
                    &self,
                    buf: &mut <Any as Database>::ArgumentBuffer<'q>,
                ) -> Result<IsNull, BoxDynError> {
                    <i64 as Encode<'q, Any>>::encode(self.0, buf)
                }
            }
            impl<'r> Decode<'r, Any> for $t {
                fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
                    Ok(Self(<i64 as Decode<'r, Any>>::decode(value)?))
                }
            }
        )+
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
