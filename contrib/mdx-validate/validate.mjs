#!/usr/bin/env node
// gitpub validate step: compile the article with the real MDX compiler.
//
// Step protocol (gitpub SPEC §12): one JSON object on stdin, {"path", "text"}; one JSON object
// on stdout, {"ok": true} or {"ok": false, "reason", "line"}. An article that does not compile
// is an answer (exit 0, ok false); only a request outside the protocol or a crash of this
// script exits non-zero, which gitpub treats as a failed step (REVIEW, fail closed).
import {compile} from '@mdx-js/mdx'

async function readStdin() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  return Buffer.concat(chunks).toString('utf8')
}

function fail(message, code = 2) {
  process.stderr.write(`mdx-validate: ${message.split('\n')[0]}\n`)
  process.exit(code)
}

// Front matter is YAML for the site generator, not MDX: blank it out line by line so the
// compiler sees the body and every line number it reports is still the article's own.
function blankFrontMatter(text) {
  const lines = text.split('\n')
  if (lines[0].trim() !== '---') return {text}
  const close = lines.findIndex((line, i) => i > 0 && line.trim() === '---')
  if (close < 0) {
    return {error: {ok: false, reason: 'front matter opened with --- is never closed', line: 1}}
  }
  for (let i = 0; i <= close; i++) lines[i] = ''
  return {text: lines.join('\n')}
}

// VFileMessage carries the position in `line` or `place`; a few messages (an unclosed tag at
// the end of the file) only name it in the text, as "(3:1-3:6)".
function lineOf(error) {
  if (Number.isInteger(error.line)) return error.line
  const place = error.place
  if (place && Number.isInteger(place.line)) return place.line
  if (place && place.start && Number.isInteger(place.start.line)) return place.start.line
  const match = /\((\d+):\d+-\d+:\d+\)/.exec(String(error.reason ?? error.message))
  return match ? Number(match[1]) : undefined
}

const raw = await readStdin()
let request
try {
  request = JSON.parse(raw)
} catch {
  fail('request on stdin is not JSON')
}
if (request === null || typeof request !== 'object' || Array.isArray(request)) {
  fail('request is not a JSON object')
}
if (typeof request.text !== 'string' || typeof request.path !== 'string') {
  fail('request needs string fields "path" and "text"')
}

const body = blankFrontMatter(request.text)
let answer
if (body.error) {
  answer = body.error
} else {
  try {
    await compile(body.text, {format: request.path.endsWith('.md') ? 'md' : 'mdx'})
    answer = {ok: true}
  } catch (error) {
    const reason = String(error.reason ?? error.message ?? error).split('\n')[0]
    answer = {ok: false, reason: `MDX: ${reason}`}
    const line = lineOf(error)
    if (line !== undefined) answer.line = line
  }
}
process.stdout.write(JSON.stringify(answer) + '\n')
