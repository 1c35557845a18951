//! Properties: redaction never panics and is idempotent; HTML escaping never yields a tag.

use proptest::prelude::*;
use trail_render::{escape_html, RedactionCounts, Redactor};

/// Fragments that build text near the patterns' edges.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        Just("AKIA".to_string()),
        Just("ghp_".to_string()),
        Just("github_pat_".to_string()),
        Just("sk-ant-".to_string()),
        Just("sk-proj-".to_string()),
        Just("xoxb-".to_string()),
        Just("AIza".to_string()),
        Just("sk_live_".to_string()),
        Just("eyJ".to_string()),
        Just("Authorization: Bearer ".to_string()),
        Just("-----BEGIN PRIVATE KEY-----".to_string()),
        Just("-----END PRIVATE KEY-----".to_string()),
        Just("https://u:".to_string()),
        Just("@".to_string()),
        Just("API_TOKEN=".to_string()),
        Just("PASSWORD=".to_string()),
        Just("\"".to_string()),
        Just("[REDACTED:".to_string()),
        "[A-Za-z0-9_/+=.-]{0,60}",
    ]
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(fragment(), 0..12).prop_map(|v| v.concat())
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn redaction_is_idempotent(s in text()) {
        let r = Redactor::new(&[]).unwrap();
        let mut c = RedactionCounts::default();
        let once = r.redact(&s, &mut c).into_owned();
        let mut c2 = RedactionCounts::default();
        let twice = r.redact(&once, &mut c2).into_owned();
        prop_assert_eq!(&twice, &once);
        prop_assert_eq!(c2.total(), 0);
    }

    #[test]
    fn html_escaping_never_yields_a_tag(s in any::<String>()) {
        let mut out = Vec::new();
        escape_html(&s, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        prop_assert!(!out.contains('<') && !out.contains('>'));
        prop_assert!(!out.contains('"') && !out.contains('\''));
        prop_assert_eq!(unescape(&out), s);
    }
}
