//! What a crash point is, and the one macro that declares a crate's points.

use std::fmt;

/// A named place where a process can be stopped: each stage's `Point` enum, declared with
/// [`crash_points!`](crate::crash_points).
pub trait CrashPoint: Copy + fmt::Display + Send + Sync + 'static {
    /// The failpoint name, also used by `--pause-at`, in tables and in test names.
    fn name(self) -> &'static str;
}

/// Declares a crate's crash points: an enum with one documented variant per point, each given
/// its failpoint name.
///
/// The enum gets `ALL` (every point, in declaration order: the order the code passes them),
/// `name`, `from_name`, `Display` (the name) and [`CrashPoint`], so that
/// [`PointHooks`](crate::PointHooks) can run at it.
///
/// ```
/// retrykey_crashpoints::crash_points! {
///     /// A place on the path of one delivery.
///     pub enum Point {
///         /// The consumer has answered; the outbox is not marked yet.
///         Sent = "sent",
///     }
/// }
///
/// assert_eq!(Point::ALL, [Point::Sent]);
/// assert_eq!(Point::from_name("sent"), Some(Point::Sent));
/// assert_eq!(Point::from_name("lost"), None);
/// ```
#[macro_export]
macro_rules! crash_points {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$variant_meta:meta])*
                $variant:ident = $point:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $(
                $(#[$variant_meta])*
                $variant,
            )+
        }

        impl $name {
            /// Every point, in the order the code passes them.
            pub const ALL: [$name; [$($point),+].len()] = [$($name::$variant),+];

            /// The failpoint name, also used by `--pause-at`, in tables and in test names.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $point,)+
                }
            }

            /// The point with this name.
            pub fn from_name(name: &str) -> ::core::option::Option<$name> {
                $name::ALL.into_iter().find(|point| point.name() == name)
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl $crate::CrashPoint for $name {
            fn name(self) -> &'static str {
                $name::name(self)
            }
        }
    };
}
