"""Offline measurement of one lever before it is built: does stemming help the lexical channel?

A plain Okapi BM25 (k1 1.2, b 0.75) over LoCoMo dev turns written the way `cargo xtask eval
locomo` writes them (speaker prefix, image caption, the last 300 characters of the turn before
in the same session), with and without Snowball English stemming of both documents and
questions. Prints recall_frac@10 overall and by category (1 multi-hop, 2 temporal, 3
open-domain, 4 single-hop). Run from the repository root:

    python3 -m venv /tmp/stemvenv && /tmp/stemvenv/bin/pip install snowballstemmer
    /tmp/stemvenv/bin/python docs/experiments/stemmed_bm25.py

Figures and what they mean for the service: docs/quality.md, "Stemming".
"""
import json,math,re,collections,snowballstemmer
st=snowballstemmer.stemmer('english')
d=json.load(open('../shared/data/locomo-dev.json'))
STOP=set("a an the and or of to in on at for with is are was were be been do does did what which who whom when where why how has have had i you he she it we they my your his her its our their me him them this that these those as by from about into than then so not no yes can could would should will just also like".split())
def toks(t): return [w.lower() for w in re.findall(r"[A-Za-z0-9]+",t)]
def run(stem):
    res=collections.defaultdict(list)
    for c in d:
        conv=c['conversation']; docs=[];ids=[]
        prev=None;
        for n in range(1,100):
            s=conv.get(f'session_{n}')
            if not s: break
            prev=None
            for t in s:
                txt=f"{t['speaker']}: {t['text']}"+(f" [shared an image: {t['blip_caption']}]" if t.get('blip_caption') else '')
                full=txt+(' '+prev[-300:] if prev else '')
                prev=txt
                w=toks(full)
                if stem: w=st.stemWords(w)
                docs.append(collections.Counter(w)); ids.append(t['dia_id'])
        N=len(docs); avg=sum(sum(x.values()) for x in docs)/N
        df=collections.Counter(w for x in docs for w in x)
        for q in c['qa']:
            if q['category']==5: continue
            qt=[w for w in toks(q['question']) if w not in STOP]
            if stem: qt=st.stemWords(qt)
            qt=list(dict.fromkeys(qt))
            sc=[]
            for i,x in enumerate(docs):
                L=sum(x.values()); s=0
                for w in qt:
                    f=x.get(w,0)
                    if f: 
                        idf=max(1e-6,math.log((N-df[w]+0.5)/(df[w]+0.5)))
                        s+=idf*f*2.2/(f+1.2*(0.25+0.75*L/avg))
                if s>0: sc.append((s,i))
            sc.sort(reverse=True)
            top=[ids[i] for _,i in sc[:10]]
            ev=q['evidence']
            if not ev: continue
            res[q['category']].append(sum(e in top for e in ev)/len(ev))
    allv=[v for l in res.values() for v in l]
    return sum(allv)/len(allv),{k:round(sum(v)/len(v),3) for k,v in sorted(res.items())}
print('plain',run(False)); print('stem',run(True))
