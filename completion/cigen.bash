# bash completion for cigen.  Installed by `make install` into
# $(PREFIX)/share/bash-completion/completions/cigen; or source it.
#
# Commands and options come from `cigen --help` and `cigen COMMAND --help`;
# job names (explain), dimension names and values (--where, --only, --also,
# --collapse), tree names (--tree, tree=) and workflow names (--workflow,
# workflow=) from `cigen list` of the project being completed (the -C and -m
# already on the line are honoured).  Nothing is hard-coded that
# cigen can say itself.

# the cigen being completed, with the -C/-m of the line
_cigen_run()
{
    local cmd=${COMP_WORDS[0]} i
    local -a pre=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -C | --directory | -m | --manifest)
            ((i + 1 < COMP_CWORD)) && pre+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 1]}")
            ((i++))
            ;;
        esac
    done
    command "$cmd" "${pre[@]}" "$@" 2>/dev/null
}

# the command names `cigen --help` lists
_cigen_commands()
{
    _cigen_run --help | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }'
}

# the options `cigen [COMMAND] --help` names
_cigen_options()
{
    _cigen_run "$@" --help | grep -oE -- '(^|[[ ,])--?[a-zA-Z][a-zA-Z-]*' | sed -E 's/^[[ ,]//' | sort -u
}

# job names: the first column of `cigen list`
_cigen_jobs()
{
    _cigen_run list | awk 'NR > 1 { print $1 }'
}

# NAME=VALUE for every dimension value of `cigen list` ('-': not set)
_cigen_pairs()
{
    _cigen_run list | awk 'NR == 1 { for (i = 2; i <= NF; i++) h[i] = $i; next }
        { for (i = 2; i <= NF; i++) if ($i != "-" && !seen[h[i] "=" $i]++) print h[i] "=" $i }'
}

# tree and workflow names, from `cigen list --json` ("tree":"NAME",
# "workflows":["A","B"]): the trees with a job, the workflows with an entry
_cigen_trees()
{
    _cigen_run list --json | grep -o '"tree":"[^"]*"' | sed -e 's/^"tree":"//' -e 's/"$//' | sort -u
}

_cigen_workflows()
{
    _cigen_run list --json | grep -o '"workflows":\[[^]]*\]' | sed -e 's/^"workflows":\[//' -e 's/\]$//' |
        tr ',' '\n' | sed -e 's/^"//' -e 's/"$//' | grep -v '^$' | sort -u
}

_cigen_dimensions()
{
    _cigen_run list | awk 'NR == 1 { for (i = 2; i <= NF; i++) print $i; exit }'
}

# a NAME=GLOB[,NAME=GLOB...] word: complete its last term
_cigen_complete_pattern()
{
    local cur=$1 head='' last=$1
    if [[ $cur == *,* ]]; then
        head=${cur%,*},
        last=${cur##*,}
    fi
    local neg=''
    [[ $last == '!'* ]] && { neg='!'; last=${last#!}; }
    local -a cand
    mapfile -t cand < <(_cigen_pairs; _cigen_trees | sed 's/^/tree=/'; _cigen_workflows | sed 's/^/workflow=/')
    if [[ $last != *=* ]]; then
        local -a names
        mapfile -t names < <(printf '%s\n' "${cand[@]%%=*}" phase tree workflow tier | sort -u)
        mapfile -t COMPREPLY < <(compgen -P "$head$neg" -S = -W "${names[*]}" -- "$last")
        compopt -o nospace 2>/dev/null
    else
        mapfile -t COMPREPLY < <(compgen -P "$head$neg" -W "${cand[*]}" -- "$last")
    fi
}

_cigen()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=''
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()
    # the command: the first word that is not a global option or its argument
    local i command=''
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -C | --directory | -m | --manifest) ((i++)) ;;
        -*) ;;
        *) command=${COMP_WORDS[i]}; break ;;
        esac
    done
    case $prev in
    -C | --directory)
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        return
        ;;
    -m | --manifest | --overlay | -o | --output)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
        ;;
    --where | --only | --also)
        _cigen_complete_pattern "$cur"
        return
        ;;
    --cell)
        _cigen_complete_pattern "$cur"
        return
        ;;
    --collapse | --dims)
        mapfile -t COMPREPLY < <(compgen -W "$(_cigen_dimensions)" -- "$cur")
        return
        ;;
    --format)
        mapfile -t COMPREPLY < <(compgen -W "dot svg png" -- "$cur")
        return
        ;;
    --tree)
        mapfile -t COMPREPLY < <(compgen -W "$(_cigen_trees)" -- "$cur")
        return
        ;;
    --workflow)
        mapfile -t COMPREPLY < <(compgen -W "$(_cigen_workflows)" -- "$cur")
        return
        ;;
    esac
    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "$(_cigen_options)" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$(_cigen_commands)" -- "$cur")
        fi
        return
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_cigen_options "$command")" -- "$cur")
        return
    fi
    case $command in
    explain) mapfile -t COMPREPLY < <(compgen -W "$(_cigen_jobs)" -- "$cur") ;;
    merge-driver) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    esac
}

complete -F _cigen cigen
