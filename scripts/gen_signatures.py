#!/usr/bin/env python3
"""Usage: gen_signatures.py [PUPPET_FUNCTIONS_DIR] [--rust | --write]

Reads Puppet's 4.x functions (lib/puppet/functions/*.rb) and prints, per function, its
dispatches: parameters (kind, Puppet type string, name), block, and whether the dispatch is
an argument_mismatch handler. Output is JSON; src/eval/signatures.rs is written from it."""
import json, os, re, sys

ARGS = [a for a in sys.argv[1:] if not a.startswith('--')]
SRC = ARGS[0] if ARGS else '/usr/lib/ruby/vendor_ruby/puppet/functions'
KINDS = ('required_param', 'param', 'optional_param', 'optional_repeated_param',
         'repeated_param', 'required_repeated_param',
         'block_param', 'optional_block_param', 'required_block_param')
LINE = re.compile(r"^\s*(%s)\b\s*(?:(['\"])(.*?)\2\s*,\s*)?:(\w+)" % '|'.join(KINDS))
BARE_BLOCK = re.compile(r"^\s*(block_param|optional_block_param)\s*(?:#.*)?$")

SUBSTITUTE_LOCAL = {'upcase', 'downcase', 'tree_each'}
out = {}
for fn in sorted(os.listdir(SRC)):
    if not fn.endswith('.rb'):
        continue
    text = open(os.path.join(SRC, fn)).read()
    m = re.search(r"create_function\(:'?([\w:]+)'?", text)
    if not m:
        continue
    name = m.group(1)
    local_types = 'local_types' in text
    # The hiera family's dispatches are in their base class (`init_dispatch` of
    # lib/hiera/puppet_function.rb, beside lib/puppet).
    if 'Hiera::PuppetFunction' in text and 'init_dispatch' in text:
        text = open(os.path.join(SRC, '..', '..', 'hiera', 'puppet_function.rb')).read()
    dispatches = []
    cur = None
    indent = ''
    for line in text.split('\n'):
        s = line.strip()
        dm = re.match(r"^(dispatch|argument_mismatch)\s+:(\w+)\s+do", s)
        if dm:
            cur = {'mismatch_handler': dm.group(1) == 'argument_mismatch', 'params': [], 'block': None}
            dispatches.append(cur)
            indent = line[:len(line) - len(line.lstrip())]
            continue
        if cur is None:
            continue
        if s == 'end' and line.startswith(indent + 'end'):
            cur = None
            continue
        pm = LINE.match(line)
        if pm:
            kind, _, ty, pname = pm.groups()
            ty = ty if ty is not None else 'Any'
            if 'block' in kind:
                cur['block'] = {'type': ty if pm.group(3) is not None else 'Callable',
                                'name': pname, 'optional': kind == 'optional_block_param'}
            else:
                cur['params'].append({'kind': kind, 'type': ty, 'name': pname})
            continue
        if BARE_BLOCK.match(line):
            kind = BARE_BLOCK.match(line).group(1)
            cur['block'] = {'type': 'Callable', 'name': 'block', 'optional': kind == 'optional_block_param'}
    # Local type aliases: substituted where Puppet's messages name what they stand for
    # (a recursive alias stands for Any inside itself); other functions with local types
    # are not type-checked by Ordo.
    if name in SUBSTITUTE_LOCAL:
        for alias, body in re.findall(r"type '(\w+)\s*=\s*(.*?)'", text):
            body = re.sub(r'\b%s\b' % alias, 'Any', body)
            for d in dispatches:
                for p in d['params']:
                    p['type'] = re.sub(r'\b%s\b' % alias, body, p['type'])
        local_types = False
    out[name] = {'local_types': local_types, 'dispatches': dispatches}

# Functions Ordo leaves out of the table: min and max take any arguments (their own
# deprecation handling decides); import has no dispatch.
SKIP = {'min', 'max'}
KIND = {'required_param': 'Required', 'param': 'Required', 'optional_param': 'Optional',
        'repeated_param': 'Repeated', 'optional_repeated_param': 'Repeated',
        'required_repeated_param': 'RequiredRepeated'}


def rust():
    w = sys.stdout.write
    w('/// Sorted by name.\npub const SIGNATURES: &[Signature] = &[\n')
    for name, f in sorted(out.items()):
        ds = [x for x in f['dispatches'] if not x['mismatch_handler']]
        every = f['dispatches']
        if not ds or name in SKIP:
            continue
        mins, maxs = [], []
        for x in ds:
            ps = x['params']
            mins.append(sum(1 for p in ps if KIND[p['kind']] in ('Required', 'RequiredRepeated')))
            maxs.append(None if any('Repeated' in KIND[p['kind']] for p in ps) else len(ps))
        mx = 'None' if None in maxs else 'Some(%d)' % max(maxs)
        bl = [x['block'] for x in ds]
        if all(b and not b['optional'] for b in bl):
            block = 'Required'
        elif all(b is None for b in bl):
            block = 'None'
        else:
            block = 'Optional'
        # Type checks only where Ordo can read the types: no local type aliases (but those
        # substituted above).
        checked = not f['local_types']
        w('    Signature {\n        name: "%s",\n        min: %d,\n        max: %s,\n        block: Block::%s,\n'
          % (name, min(mins), mx, block))
        if checked:
            w('        dispatches: &[\n')
            for x in every:
                w('            Dispatch {\n                params: &[\n')
                for p in x['params']:
                    w('                    Param {\n                        name: "%s",\n                        ty: %s,\n                        kind: Kind::%s,\n                    },\n'
                      % (p['name'], json.dumps(p['type']), KIND[p['kind']]))
                w('                ],\n')
                b = x['block']
                if b:
                    w('                block: Some(BlockParam {\n                    name: "%s",\n                    ty: %s,\n                    optional: %s,\n                }),\n'
                      % (b['name'], json.dumps(b['type']), 'true' if b['optional'] else 'false'))
                else:
                    w('                block: None,\n')
                w('                handler: %s,\n' % ('true' if x['mismatch_handler'] else 'false'))
                w('            },\n')
            w('        ],\n')
        else:
            w('        dispatches: &[],\n')
        w('    },\n')
    w('];\n')


if '--write' in sys.argv:
    # Replace the table in src/eval/signatures.rs (run from the repository's root).
    import io
    buf = io.StringIO()
    real, sys.stdout = sys.stdout, buf
    rust()
    sys.stdout = real
    path = 'src/eval/signatures.rs'
    src = open(path).read()
    start = src.index('/// Sorted by name.')
    end = src.index('\n];\n', start) + 4
    open(path, 'w').write(src[:start] + buf.getvalue() + src[end:])
elif '--rust' in sys.argv:
    rust()
else:
    json.dump(out, sys.stdout, indent=1)
