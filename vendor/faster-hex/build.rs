fn main() {
    autocfg::new().emit_path_cfg("core::error::Error", "has_core_error");
}
