//! How the enums and ids are stored, the same on both backends (server only): an enum as one of
//! its names in a TEXT column, an id newtype as its integer. sqlx's derives implement each
//! driver but not `Any`, so these few impls are written here, once, by macro.

use crate::ids;

/// A Rust enum kept as one of its names in a TEXT column, read and written as that text on
/// both backends: sqlx's `#[derive(Type)]` implements each driver but not `Any`. A stored name
/// the enum does not know is a decoding error that names it (the schema's CHECKs prevent one).
macro_rules! text_column {
    ($t:ty, $what:literal) => {
        impl sqlx::Type<sqlx::Any> for $t {
            fn type_info() -> sqlx::any::AnyTypeInfo {
                <str as sqlx::Type<sqlx::Any>>::type_info()
            }
            fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
                <str as sqlx::Type<sqlx::Any>>::compatible(ty)
            }
        }
        impl<'q> sqlx::Encode<'q, sqlx::Any> for $t {
            fn encode_by_ref(
                &self,
                buf: &mut <sqlx::Any as sqlx::Database>::ArgumentBuffer<'q>,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <&str as sqlx::Encode<'q, sqlx::Any>>::encode(self.as_str(), buf)
            }
        }
        impl<'r> sqlx::Decode<'r, sqlx::Any> for $t {
            fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                let s = <&str as sqlx::Decode<'r, sqlx::Any>>::decode(value)?;
                <$t>::parse(s).ok_or_else(|| format!("{s:?} is not a {}", $what).into())
            }
        }
    };
}

/// An id newtype kept as the integer it wraps.
macro_rules! id_column {
    ($($t:ty),+) => {
        $(
            impl sqlx::Type<sqlx::Any> for $t {
                fn type_info() -> sqlx::any::AnyTypeInfo {
                    <i64 as sqlx::Type<sqlx::Any>>::type_info()
                }
                fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
                    <i64 as sqlx::Type<sqlx::Any>>::compatible(ty)
                }
            }
            impl<'q> sqlx::Encode<'q, sqlx::Any> for $t {
                fn encode_by_ref(
                    &self,
                    buf: &mut <sqlx::Any as sqlx::Database>::ArgumentBuffer<'q>,
                ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                    <i64 as sqlx::Encode<'q, sqlx::Any>>::encode(self.0, buf)
                }
            }
            impl<'r> sqlx::Decode<'r, sqlx::Any> for $t {
                fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                    Ok(Self(<i64 as sqlx::Decode<'r, sqlx::Any>>::decode(value)?))
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
