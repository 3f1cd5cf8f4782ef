#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The Prometheus rules of prometheus/kvmstat.rules.yml: promtool finds them
# valid (check rules) and their unit tests in tests/prometheus/ pass (each
# recording rule's values, each alert firing and not, a VM restarted under
# a new pid). Needs neither KVM nor root, only promtool.
source tests/system/lib.sh
command -v promtool >/dev/null || skip "promtool missing (make deps-test installs it)"

RULES=prometheus/kvmstat.rules.yml
[ -r "$RULES" ] || fail "no $RULES"
TESTS=(tests/prometheus/*.yml)
[ -r "${TESTS[0]}" ] || fail "no unit tests in tests/prometheus/"

promtool check rules "$RULES" >"$TMP/check" 2>&1 ||
	fail "promtool check rules $RULES: $(cat "$TMP/check")"
grep -q SUCCESS "$TMP/check" || fail "promtool check rules said no SUCCESS: $(cat "$TMP/check")"
echo "ok: promtool check rules: $(grep -o 'SUCCESS.*' "$TMP/check")"

promtool test rules "${TESTS[@]}" >"$TMP/test" 2>&1 ||
	fail "promtool test rules ${TESTS[*]}: $(cat "$TMP/test")"
# each file said SUCCESS
n=$(grep -c SUCCESS "$TMP/test")
[ "$n" = ${#TESTS[@]} ] ||
	fail "promtool test rules: $n of ${#TESTS[@]} files passed: $(cat "$TMP/test")"
echo "ok: promtool test rules: ${#TESTS[@]} files pass (${TESTS[*]})"
