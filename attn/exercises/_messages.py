"""Every sentence the grader prints, in English and Spanish.

``MESSAGES[key] = {"en": ..., "es": ...}``: ``str.format`` templates; the placeholders
are the same in both languages (``tests/attn/test_exercises.py`` checks it). Numbers go
through :func:`number` so that the Spanish text writes a decimal comma.
"""

LANGUAGES = ("en", "es")

MESSAGES = {
    # verdicts
    # The same symbols in both languages on purpose: the book runs each check on its
    # solution once, at build time, and both editions show that one output.
    "passed": {
        "en": "✓ {id} {n}/{n}",
        "es": "✓ {id} {n}/{n}",
    },
    "failed": {
        "en": "✗ {id}: check {i} of {n} fails, {call}\n  {detail}",
        "es": "✗ {id}: falla la comprobación {i} de {n}, {call}\n  {detail}",
    },
    "hint": {
        "en": "  Hint: {text}",
        "es": "  Pista: {text}",
    },
    # the candidate itself
    "raised": {
        "en": "the function raised {exc}: {text}",
        "es": "la función lanzó {exc}: {text}",
    },
    "raised_bare": {
        "en": "the function raised {exc}",
        "es": "la función lanzó {exc}",
    },
    "returned_none": {
        "en": "the function returned None: did it forget its return statement?",
        "es": "la función devolvió None: ¿falta la instrucción return?",
    },
    "mutated": {
        "en": "the function changed its argument {name} in place; it must leave its inputs as they were",
        "es": "la función modificó su argumento {name} in situ; debe dejar intactas sus entradas",
    },
    # the command line
    "cli_unknown_id": {
        "en": "unknown exercise_id {id}; nearest: {near}",
        "es": "no existe el ejercicio {id}; los más parecidos: {near}",
    },
    "cli_no_file": {
        "en": "no such file: {path}",
        "es": "no existe el archivo {path}",
    },
    "cli_no_function": {
        "en": "{path} defines no function named {name}",
        "es": "{path} no define ninguna función llamada {name}",
    },
    # argparse's own error lines. "en" is argparse's English template, read only to recognise
    # the line (__main__._argparse_line); "es" is what --lang es prints instead.
    "cli_argument": {
        "en": "argument {name}: {message}",
        "es": "argumento {name}: {message}",
    },
    "cli_unrecognized": {
        "en": "unrecognized arguments: {args}",
        "es": "argumentos no reconocidos: {args}",
    },
    "cli_required": {
        "en": "the following arguments are required: {args}",
        "es": "faltan argumentos obligatorios: {args}",
    },
    "cli_invalid_choice_closest": {  # Python 3.14's suggest_on_error
        "en": "invalid choice: {value}, maybe you meant {closest}? (choose from {choices})",
        "es": "valor no válido: {value}; ¿querías decir {closest}? (elige entre {choices})",
    },
    "cli_invalid_choice": {
        "en": "invalid choice: {value} (choose from {choices})",
        "es": "valor no válido: {value} (elige entre {choices})",
    },
    "cli_expected_value": {
        "en": "expected one argument",
        "es": "necesita un valor",
    },
    "cli_ambiguous": {
        "en": "ambiguous option: {option} could match {matches}",
        "es": "opción ambigua: {option} puede referirse a {matches}",
    },
    "cli_explicit_value": {
        "en": "ignored explicit argument {value}",
        "es": "no admite ningún valor ({value})",
    },
    # what is compared
    "the_result": {"en": "the result", "es": "el resultado"},
    "output_named": {"en": "output {i} ({name})", "es": "la salida {i} ({name})"},
    # structure
    "not_tensor": {
        "en": "{what} is a {type}, not a torch.Tensor",
        "es": "{what} es de tipo {type}, no un torch.Tensor",
    },
    "not_tuple": {
        "en": "the result must be a tuple of {n} tensors ({names}); got a {type}",
        "es": "el resultado debe ser una tupla de {n} tensores ({names}); se obtuvo un objeto de tipo {type}",
    },
    "not_number": {
        "en": "{what} is a {type}, not a number",
        "es": "{what} es de tipo {type}, no un número",
    },
    "shape": {
        "en": "{what} has shape {got}; expected {want}",
        "es": "{what} tiene forma {got}; se esperaba {want}",
    },
    "dtype_bool": {
        "en": "{what} has dtype {got}; expected torch.bool (True = may attend)",
        "es": "{what} tiene dtype {got}; se esperaba torch.bool (True = puede atender)",
    },
    "dtype_int": {
        "en": "{what} has dtype {got}; expected an integer dtype (torch.int64)",
        "es": "{what} tiene dtype {got}; se esperaba un dtype entero (torch.int64)",
    },
    "dtype_float": {
        "en": "{what} has dtype {got}; expected {want}, the dtype of the inputs",
        "es": "{what} tiene dtype {got}; se esperaba {want}, el dtype de las entradas",
    },
    "nan": {
        "en": "{what} holds NaN or inf at index {index} (expected {want})",
        "es": "{what} contiene NaN o inf en el índice {index} (se esperaba {want})",
    },
    "value": {
        "en": "{what} differs at index {index}: {got} instead of {want} "
              "(largest difference {diff}, tolerance {tol})",
        "es": "{what} difiere en el índice {index}: {got} en lugar de {want} "
              "(diferencia máxima {diff}, tolerancia {tol})",
    },
    "scalar": {
        "en": "{what} is {got}; expected {want}",
        "es": "{what} vale {got}; se esperaba {want}",
    },
    "int_value": {
        "en": "{what} differs at index {index}: {got} instead of {want}",
        "es": "{what} difiere en el índice {index}: {got} en lugar de {want}",
    },
    # masks
    "mask_extra": {
        "en": "row {row} (query at position {pos}) sees key(s) {keys}, which it must not see",
        "es": "la fila {row} (consulta en la posición {pos}) ve la(s) clave(s) {keys}, que no debe ver",
    },
    "mask_missing": {
        "en": "row {row} (query at position {pos}) does not see key(s) {keys}, which it must see",
        "es": "la fila {row} (consulta en la posición {pos}) no ve la(s) clave(s) {keys}, que sí debe ver",
    },
    "mask_batch_extra": {
        "en": "sequence {row} marks position(s) {keys} as real tokens; they are padding",
        "es": "la secuencia {row} marca la(s) posición(es) {keys} como tokens reales; son relleno",
    },
    "mask_batch_missing": {
        "en": "sequence {row} marks position(s) {keys} as padding; they are real tokens",
        "es": "la secuencia {row} marca la(s) posición(es) {keys} como relleno; son tokens reales",
    },
    "tree_extra": {
        "en": "node {row} sees node(s) {keys}, which are not its ancestors",
        "es": "el nodo {row} ve nodos que no son antepasados suyos: {keys}",
    },
    "tree_missing": {
        "en": "node {row} does not see {keys}, which it must see (the cached prefix, itself and its ancestors)",
        "es": "el nodo {row} no ve la(s) clave(s) {keys}, que sí debe ver (las del prefijo de la caché, "
              "la del propio nodo y las de sus antepasados)",
    },
    # hints for answers readers really write
    "hint_top_left": {
        "en": "the mask is aligned top-left. The {T_q} queries are the last {T_q} of {T_k} positions, "
              "so the last row must see all {T_k} keys (torch.ones(T_q, T_k).tril(T_k - T_q)).",
        "es": "la máscara está alineada arriba a la izquierda. Las {T_q} consultas son las {T_q} últimas de "
              "{T_k} posiciones, así que la última fila debe ver las {T_k} claves "
              "(torch.ones(T_q, T_k).tril(T_k - T_q)).",
    },
    "hint_inverted": {
        "en": "the mask is inverted: True must mean 'may attend' (tril keeps the past, triu the future).",
        "es": "la máscara está invertida: True debe significar «puede atender» (tril conserva el pasado, "
              "triu el futuro).",
    },
    "hint_window_off_by_one": {
        "en": "the window is off by one: each query sees exactly {window} keys, itself included "
              "((i + T_k - T_q) - j < window).",
        "es": "a la ventana le sobra o le falta una clave: cada consulta ve exactamente {window} claves, "
              "ella incluida ((i + T_k - T_q) - j < window).",
    },
    "hint_view_no_transpose": {
        "en": "head 0 does not hold columns 0:{d_head} of each token: x.view(B, h, T, d_head) cuts the "
              "memory in the wrong order. Use x.view(B, T, h, d_head).transpose(1, 2).",
        "es": "la cabeza 0 no contiene las columnas 0:{d_head} de cada token: x.view(B, h, T, d_head) "
              "corta la memoria en el orden equivocado. Usa x.view(B, T, h, d_head).transpose(1, 2).",
    },
    "hint_repeat_order": {
        "en": "query head 1 gets key-value head 1, but it must share head 0 (head j uses j // n_rep): "
              "that is the order of repeat/tile, not of repeat_interleave.",
        "es": "la cabeza de consultas 1 recibe la cabeza de claves y valores 1, pero debe compartir la 0 (la "
              "cabeza j usa la j // n_rep): ese es el orden de repeat/tile, no el de repeat_interleave.",
    },
    "hint_rope_pairs": {
        "en": "the rotation pairs or the frequencies do not follow the rotate-half convention: "
              "dimension i turns with dimension i + d/2 at angle position · base^(-2i/d).",
        "es": "los pares que giran o sus frecuencias no siguen el convenio de girar por mitades (rotate_half): "
              "la dimensión i gira junto con la i + d/2, con un ángulo posición · base^(-2i/d).",
    },
    "hint_positions_shared": {
        "en": "every row gets the same positions; each row's first real token must get position 0 "
              "(mask.long().cumsum(-1) - 1).",
        "es": "todas las filas reciben las mismas posiciones; el primer token real de cada fila debe "
              "recibir la posición 0 (mask.long().cumsum(-1) - 1).",
    },
    "hint_overflow": {
        "en": "with large scores exp() overflows to inf; subtract the largest value first.",
        "es": "con puntuaciones grandes, exp() se desborda y da inf; resta antes el valor máximo.",
    },
    "hint_lse_overflow": {
        "en": "for a large lse2 - lse1, exp() overflows to inf; ln(e^a + e^b) = max(a, b) + ln(1 + e^-|a - b|) "
              "(torch.logaddexp) never does.",
        "es": "con lse2 - lse1 grande, exp() se desborda y da inf; ln(e^a + e^b) = max(a, b) + ln(1 + e^-|a - b|) "
              "(torch.logaddexp) nunca se desborda.",
    },
    "hint_empty_row": {
        "en": "a row with every key hidden must give zero weights, not NaN.",
        "es": "una fila con todas las claves ocultas debe dar pesos nulos, no NaN.",
    },
    "hint_scale": {
        "en": "the scores must be divided by √d_k, the width of the queries and keys (here {d_k}).",
        "es": "las puntuaciones deben dividirse entre √d_k, la dimensión de consultas y claves (aquí {d_k}).",
    },
    "hint_softmax_axis": {
        "en": "the weights of each query must sum to 1 over the keys (softmax over the last axis).",
        "es": "los pesos de cada consulta, sumados sobre todas las claves, deben dar 1 (la softmax se aplica "
              "sobre el último eje).",
    },
    "hint_decay_mask": {
        "en": "inside a chunk, the weight of key j for query i must carry the decay α_(j+1) ⋯ α_i, "
              "not only the causal 0/1 mask.",
        "es": "dentro de un bloque, el peso de la clave j para la consulta i debe llevar el decaimiento "
              "α_(j+1) ⋯ α_i, no solo la máscara causal de ceros y unos.",
    },
    "hint_cache_cut": {
        "en": "the first of the {T_q} new queries still needs the {window} - 1 keys before it: "
              "keep the last window + T_q - 1 keys.",
        "es": "la primera de las {T_q} consultas nuevas aún necesita las {window} - 1 claves anteriores: "
              "conserva las últimas window + T_q - 1 claves.",
    },
    "hint_mask_only_with_cache": {
        "en": "without a cache (T_q = T_k) the queries must still be masked causally.",
        "es": "sin caché (T_q = T_k), las consultas también deben enmascararse de forma causal.",
    },
    "hint_mask_convention": {
        "en": "the mask and the code that applies it use different conventions (additive 0/-inf "
              "against 1 = allowed, 0 = blocked).",
        "es": "la máscara y el código que la aplica siguen convenios distintos (aditiva 0/-inf frente a "
              "1 = permitido, 0 = bloqueado).",
    },
}

# Titles of the exercises: id -> {"en": ..., "es": ...}; filled by the chapter modules.
TITLES = {}


def number(x, lang):
    """A float as prose writes it: 4 significant digits, a decimal comma in Spanish."""
    if isinstance(x, float) and x != x:
        return "NaN"
    text = f"{x:.4g}"
    return text.replace(".", ",") if lang == "es" else text


def msg(key, lang, **kw):
    """The message ``key`` in ``lang``, with ``kw`` filled in."""
    return MESSAGES[key][lang].format(**kw)
