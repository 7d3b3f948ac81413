# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# The accept lists' one rule, for tests/lint.sh and tests/lint-shell.sh:
# every entry sits under a comment that says why it is accepted.
#
#   accept_each FILE FUNC
#
# calls "FUNC N LINE" for each entry (N its line number) in the current
# shell, so that FUNC may add to the caller's arrays; an entry with no
# comment above it, and an unreadable FILE, go to the caller's fail().
accept_each() {
	local file=$1 func=$2 line n=0 why=0

	if [ ! -r "$file" ]; then
		fail "cannot read the accept list $file"
		return
	fi
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		case $line in
		'') why=0; continue ;;
		'#'*) why=1; continue ;;
		esac
		if [ $why -eq 0 ]; then
			fail "$file:$n: entry without a comment saying why: $line"
			continue
		fi
		"$func" "$n" "$line"
	done < "$file"
}
