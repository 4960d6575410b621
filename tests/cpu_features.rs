//! The patched faster-hex (vendor/README.md): its vector paths, chosen by std's answers,
//! encode and decode as the plain one does.

/// Every length to past two AVX2 blocks, so the vector loop and its tail both run.
#[test]
fn faster_hex_round_trips_as_before() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(4099).collect();
    for len in (0..=130).chain([4099]) {
        let bytes = &bytes[..len];
        let hex = faster_hex::hex_string(bytes);
        let expected: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, expected, "{len} bytes");
        let mut back = vec![0u8; len];
        faster_hex::hex_decode(hex.as_bytes(), &mut back).expect("decodes");
        assert_eq!(back, bytes, "{len} bytes");
        let upper = hex.to_uppercase();
        faster_hex::hex_decode(upper.as_bytes(), &mut back).expect("decodes upper case");
        assert_eq!(back, bytes, "{len} bytes, upper case");
    }
    let mut out = [0u8; 2];
    assert!(faster_hex::hex_decode(b"zz00", &mut out).is_err());
}
