//! Run-time checks of the argument rules, for work-items whose orders,
//! scopes and flags are values rather than types.
//!
//! Each check returns a [`SyncError`] naming the rule broken; the typed API
//! makes the same mistakes compile errors instead.

use super::{MemFlags, MemOrder, MemScope};

/// An argument combination the specification forbids or leaves undefined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    /// Fence flags of zero (`000_96da91f170ff246f.txt`: undefined).
    #[error("fence flags are 0; they must be CLK_GLOBAL_MEM_FENCE, CLK_LOCAL_MEM_FENCE, CLK_IMAGE_MEM_FENCE or a combination")]
    ZeroFlags,
    /// Fence flags with unknown bits.
    #[error("fence flags {bits:#x} have bits that are not CLK_LOCAL_MEM_FENCE (1), CLK_GLOBAL_MEM_FENCE (2) or CLK_IMAGE_MEM_FENCE (4)")]
    UnknownFlags {
        /// The flags given.
        bits: u32,
    },
    /// An order the operation does not allow.
    #[error("{op} cannot take {order}")]
    Order {
        /// The operation.
        op: &'static str,
        /// The order given.
        order: MemOrder,
    },
    /// A compare-exchange failure order that is release or acq_rel, or
    /// stronger than the success order.
    #[error("compare-exchange failure order {failure} is not allowed with success order {success}: it must be relaxed, acquire or seq_cst and no stronger than the success order")]
    FailureOrder {
        /// Success order.
        success: MemOrder,
        /// Failure order.
        failure: MemOrder,
    },
    /// A scope the operation does not allow.
    #[error("{op} cannot take {scope}")]
    Scope {
        /// The operation.
        op: &'static str,
        /// The scope given.
        scope: MemScope,
    },
    /// `memory_scope_work_item` with flags other than the image flag alone.
    #[error(
        "memory_scope_work_item is only allowed with CLK_IMAGE_MEM_FENCE alone, not with {flags}"
    )]
    WorkItemScopeFlags {
        /// The flags given.
        flags: MemFlags,
    },
}

/// Checks a load's order.
pub fn load_order(order: MemOrder) -> Result<(), SyncError> {
    match order {
        MemOrder::Release | MemOrder::AcqRel => Err(SyncError::Order {
            op: "atomic_load",
            order,
        }),
        _ => Ok(()),
    }
}

/// Checks a store's order.
pub fn store_order(order: MemOrder) -> Result<(), SyncError> {
    match order {
        MemOrder::Acquire | MemOrder::AcqRel => Err(SyncError::Order {
            op: "atomic_store",
            order,
        }),
        _ => Ok(()),
    }
}

/// Checks a compare-exchange's order pair.
pub fn failure_order(success: MemOrder, failure: MemOrder) -> Result<(), SyncError> {
    let ok = match failure {
        MemOrder::Relaxed => true,
        MemOrder::Acquire => matches!(
            success,
            MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst
        ),
        MemOrder::SeqCst => success == MemOrder::SeqCst,
        MemOrder::Release | MemOrder::AcqRel => false,
    };
    if ok {
        Ok(())
    } else {
        Err(SyncError::FailureOrder { success, failure })
    }
}

/// Checks an atomic operation's scope (never work_item).
pub fn atomic_scope(op: &'static str, scope: MemScope) -> Result<(), SyncError> {
    if scope == MemScope::WorkItem {
        Err(SyncError::Scope { op, scope })
    } else {
        Ok(())
    }
}

/// Checks a fence's flags (raw bits) and scope.
pub fn fence(bits: u32, scope: MemScope) -> Result<MemFlags, SyncError> {
    let flags = MemFlags::from_bits(bits)?;
    if scope == MemScope::WorkItem && flags != MemFlags::IMAGE {
        return Err(SyncError::WorkItemScopeFlags { flags });
    }
    Ok(flags)
}

/// Checks a barrier's flags (raw bits) and scope.
pub fn barrier(op: &'static str, bits: u32, scope: MemScope) -> Result<MemFlags, SyncError> {
    let flags = MemFlags::from_bits(bits)?;
    if scope == MemScope::WorkItem {
        return Err(SyncError::Scope { op, scope });
    }
    Ok(flags)
}
