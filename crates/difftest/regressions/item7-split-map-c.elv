def s = DFNF ;
  split(4) @ outermost(appliedMap) ;;
  lowerToC
