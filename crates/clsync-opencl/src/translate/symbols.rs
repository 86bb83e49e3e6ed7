//! The runtime calls compiled code makes (`crate::exec::helpers` and the
//! other `exec` modules): their symbols and signatures, and the
//! trampolines through which cold paths call some of them.

use cranelift_codegen::ir::{types, AbiParam, InstBuilder as _, Signature, Type as ClType};
use cranelift_codegen::isa::CallConv;
use cranelift_jit::JITModule;
use cranelift_module::{Linkage, Module as _};

use super::{function, Shared};
use crate::exec::helpers;
use crate::CompileError;

/// The runtime calls the code may make: name, address, parameters,
/// results.
pub(super) fn helper_symbols() -> Vec<(&'static str, *const u8, Vec<ClType>, Vec<ClType>)> {
    use types::{F32, F64, I32, I64};
    vec![
        (
            "clsync_fault",
            helpers::clsync_fault as *const u8,
            vec![I64, I64, I64, I32, I32],
            vec![I64],
        ),
        (
            "clsync_barrier",
            helpers::clsync_barrier as *const u8,
            vec![I64, I32, I32, I32, I32],
            vec![],
        ),
        (
            "clsync_memcpy",
            helpers::clsync_memcpy as *const u8,
            vec![I64, I64, I64, I64, I32, I32],
            vec![],
        ),
        (
            "clsync_cast_space",
            helpers::clsync_cast_space as *const u8,
            vec![I64, I64, I32],
            vec![I64],
        ),
        (
            "clsync_f32_1",
            crate::exec::math::clsync_f32_1 as *const u8,
            vec![I32, F32],
            vec![F32],
        ),
        (
            "clsync_f32_2",
            crate::exec::math::clsync_f32_2 as *const u8,
            vec![I32, F32, F32],
            vec![F32],
        ),
        (
            "clsync_f32_3",
            crate::exec::math::clsync_f32_3 as *const u8,
            vec![I32, F32, F32, F32],
            vec![F32],
        ),
        (
            "clsync_f64_1",
            crate::exec::math::clsync_f64_1 as *const u8,
            vec![I32, F64],
            vec![F64],
        ),
        (
            "clsync_f64_2",
            crate::exec::math::clsync_f64_2 as *const u8,
            vec![I32, F64, F64],
            vec![F64],
        ),
        (
            "clsync_f64_3",
            crate::exec::math::clsync_f64_3 as *const u8,
            vec![I32, F64, F64, F64],
            vec![F64],
        ),
        (
            "clsync_f32_split",
            crate::exec::math::clsync_f32_split as *const u8,
            vec![I32, F32, F32, I64],
            vec![F32],
        ),
        (
            "clsync_f64_split",
            crate::exec::math::clsync_f64_split as *const u8,
            vec![I32, F64, F64, I64],
            vec![F64],
        ),
        (
            "clsync_half_to_float",
            crate::exec::math::clsync_half_to_float as *const u8,
            vec![I32],
            vec![F32],
        ),
        (
            "clsync_round_half",
            crate::exec::math::clsync_round_half as *const u8,
            vec![F32, I32],
            vec![F32],
        ),
        (
            "clsync_float_to_half",
            crate::exec::math::clsync_float_to_half as *const u8,
            vec![F64, I32],
            vec![I32],
        ),
        (
            "clsync_mad_sat64",
            crate::exec::math::clsync_mad_sat64 as *const u8,
            vec![I64, I64, I64, I32],
            vec![I64],
        ),
        (
            "clsync_ilogb",
            crate::exec::math::clsync_ilogb as *const u8,
            vec![F64],
            vec![I32],
        ),
        (
            "clsync_f64_int",
            crate::exec::math::clsync_f64_int as *const u8,
            vec![I32, F64, I32],
            vec![F64],
        ),
        (
            "clsync_printf",
            crate::exec::printf::clsync_printf as *const u8,
            vec![I64, I64, I64, I32, I32],
            vec![I32],
        ),
        (
            "clsync_check_access",
            crate::exec::checked::clsync_check_access as *const u8,
            vec![I64, I64, I64, I64, I32, I32, I32, I64],
            vec![I32],
        ),
        (
            "clsync_atomic",
            crate::exec::checked::clsync_atomic as *const u8,
            vec![I64, I64, I64, I32, I32, I64, I64, I32, I32, I32, I32],
            vec![I64],
        ),
        (
            "clsync_fence",
            crate::exec::checked::clsync_fence as *const u8,
            vec![I64, I32, I32, I32],
            vec![],
        ),
        (
            "clsync_async_copy",
            crate::exec::copies::clsync_async_copy as *const u8,
            vec![I64, I64, I64, I64, I64, I64, I64, I64, I32],
            vec![I64],
        ),
        (
            "clsync_collective",
            crate::exec::collectives::clsync_collective as *const u8,
            vec![I64, I32, I32, I32, I32, I64, I64, I32],
            vec![I64],
        ),
        (
            "clsync_sub_group_active",
            crate::exec::collectives::clsync_sub_group_active as *const u8,
            vec![I64, I32, I32, I32, I64, I64, I32, I64],
            vec![I64],
        ),
        (
            "clsync_uninit",
            crate::exec::checked::clsync_uninit as *const u8,
            vec![I64, I32, I32],
            vec![],
        ),
        (
            "clsync_next_item",
            crate::exec::loops::clsync_next_item as *const u8,
            vec![I64, I64],
            vec![],
        ),
        (
            "clsync_item_ids",
            crate::exec::loops::clsync_item_ids as *const u8,
            vec![I64, I64],
            vec![],
        ),
        (
            "clsync_poll",
            helpers::clsync_poll as *const u8,
            vec![I64],
            vec![],
        ),
        (
            "clsync_image_read",
            crate::exec::image::clsync_image_read as *const u8,
            vec![I64, I64, I64, I64, I64, I32, I32],
            vec![],
        ),
        (
            "clsync_image_write",
            crate::exec::image::clsync_image_write as *const u8,
            vec![I64, I64, I64, I64, I64, I64, I64, I32],
            vec![],
        ),
        (
            "clsync_image_query",
            crate::exec::image::clsync_image_query as *const u8,
            vec![I64, I64, I32],
            vec![I32],
        ),
        (
            "clsync_misaligned",
            crate::exec::checked::clsync_misaligned as *const u8,
            vec![I64, I64, I64, I32, I32],
            vec![],
        ),
        (
            "clsync_index_exceeds",
            crate::exec::checked::clsync_index_exceeds as *const u8,
            vec![I64, I64, I64, I32],
            vec![],
        ),
        (
            "clsync_wait_events",
            crate::exec::copies::clsync_wait_events as *const u8,
            vec![I64, I64, I64, I32],
            vec![],
        ),
    ]
}

pub(super) fn sig(call_conv: CallConv, params: &[ClType], rets: &[ClType]) -> Signature {
    let mut s = Signature::new(call_conv);
    s.params.extend(params.iter().map(|t| AbiParam::new(*t)));
    s.returns.extend(rets.iter().map(|t| AbiParam::new(*t)));
    s
}

/// The helpers that compiled code calls only on its cold paths, each with
/// its trampoline's name: an invalid access (`clsync_fault`) and a raised
/// cancellation gate (`clsync_poll`).
const COLD_HELPERS: [(&str, &str); 3] = [
    ("clsync_fault", "cold_clsync_fault"),
    ("clsync_poll", "cold_clsync_poll"),
    ("clsync_item_ids", "cold_clsync_item_ids"),
];

/// Defines, for each of [`COLD_HELPERS`], a trampoline in the
/// `preserve_all` calling convention that calls it and leaves its result
/// in the context ([`CTX_ANSWER`](crate::exec::ctx::CTX_ANSWER)). A call of
/// the trampoline clobbers no register, so the values a hot loop keeps in
/// registers stay there across the cold call instead of being spilled
/// around every access it checks (the platform's C convention clobbers
/// every vector register); the trampoline saves what the helper clobbers.
pub(super) fn cold_trampolines(
    shared: &mut Shared<'_>,
    jit: &mut JITModule,
    ctx: &mut cranelift_codegen::Context,
    fbc: &mut cranelift_frontend::FunctionBuilderContext,
    hs: &[(&'static str, *const u8, Vec<ClType>, Vec<ClType>)],
) -> Result<(), CompileError> {
    let jerr = |e: cranelift_module::ModuleError| CompileError::Internal(format!("{e:?}"));
    for (name, cold) in COLD_HELPERS {
        let Some((_, _, params, rets)) = hs.iter().find(|h| h.0 == name) else {
            continue;
        };
        ctx.func.signature = sig(CallConv::PreserveAll, params, &[]);
        let mut b = cranelift_frontend::FunctionBuilder::new(&mut ctx.func, fbc);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let args = b.block_params(entry).to_vec();
        let callee = jit.declare_func_in_func(shared.helpers[&name], b.func);
        let call = b.ins().call(callee, &args);
        if let (Some(r), false) = (b.inst_results(call).first().copied(), rets.is_empty()) {
            b.ins()
                .store(function::mem(), r, args[0], crate::exec::ctx::CTX_ANSWER);
        }
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(jit.target_config());
        let id = jit
            .declare_function(cold, Linkage::Local, &ctx.func.signature)
            .map_err(jerr)?;
        jit.define_function(id, ctx).map_err(jerr)?;
        jit.clear_context(ctx);
        shared.cold.insert(name, (cold, id, !rets.is_empty()));
    }
    Ok(())
}
